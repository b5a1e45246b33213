/**
 * Runs a built demo program (`demo/dist/src/<script>`) on a free port, collecting its output.
 */
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../", import.meta.url))

export const run = (script: string, args: ReadonlyArray<string>) => {
  const child = spawn(`${root}node_modules/.bin/node`, [`${root}demo/dist/src/${script}`, ...args], {
    cwd: root,
    env: { ...process.env, PORT: "0" },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
  const exited = new Promise<number | string>((resolve) => child.on("exit", (code, signal) => resolve(code ?? signal ?? -1)))
  return { child, exited, stdout: () => stdout, stderr: () => stderr }
}
