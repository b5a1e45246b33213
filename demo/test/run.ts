/**
 * Runs a built demo program (`demo/dist/src/<script>`) on a free port (unless `env` names one),
 * collecting its output.
 */
import { spawn } from "node:child_process"
import * as NodeNet from "node:net"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../", import.meta.url))

export const run = (script: string, args: ReadonlyArray<string>, env: Readonly<Record<string, string>> = {}) => {
  const child = spawn(`${root}node_modules/.bin/node`, [`${root}demo/dist/src/${script}`, ...args], {
    cwd: root,
    env: { ...process.env, PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
  const exited = new Promise<number | string>((resolve) => child.on("exit", (code, signal) => resolve(code ?? signal ?? -1)))
  return { child, exited, stdout: () => stdout, stderr: () => stderr }
}

/** A port of 127.0.0.1 held by another listener until `f` is done. */
export const withPortInUse = async <A>(f: (port: number) => Promise<A>) => {
  const server = NodeNet.createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  try {
    return await f((server.address() as NodeNet.AddressInfo).port)
  } finally {
    await new Promise((resolve) => server.close(resolve))
  }
}
