/**
 * The heap after garbage collection, for tests that require a flat heap.
 */
import * as v8 from "node:v8"
import * as vm from "node:vm"

// A callable `gc` (vitest workers do not run with --expose-gc): allowed at run time through V8 flags.
v8.setFlagsFromString("--expose-gc")
const gc = vm.runInNewContext("gc") as () => void

/** The median of three heap samples, each taken after two full collections. */
export const settledHeap = async (): Promise<number> => {
  const samples: Array<number> = []
  for (let i = 0; i < 3; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20))
    gc()
    gc()
    samples.push(process.memoryUsage().heapUsed)
  }
  return samples.sort((a, b) => a - b)[1]!
}
