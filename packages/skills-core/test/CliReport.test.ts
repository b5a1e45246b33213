/**
 * `CliReport`: a usage error is one line whatever effect/cli's messages hold (a suggestion list on
 * lines of their own, control characters in a value), and it names the command's help.
 */
import { describe, expect, it } from "@effect/vitest"
import { CliError } from "effect/cli"
import { CliReport } from "../src/index.js"

describe("CliReport.usageLine", () => {
  it("one line per invocation: every error, suggestions inline, then the help to read", () => {
    const line = CliReport.usageLine(["tool", "serve"], [
      new CliError.UnrecognizedOption({ option: "--prot", command: ["tool", "serve"], suggestions: ["--port", "--protocol"] }),
      new CliError.InvalidValue({ option: "port", value: "99999", expected: "a TCP port", kind: "flag" })
    ])
    expect(line).toBe(
      `tool: unknown flag --prot (did you mean --port or --protocol?); Invalid value for flag --port: "99999". Expected: a TCP port; run 'tool serve --help'`
    )
  })

  it("a value's control characters and line breaks never reach the terminal as they are", () => {
    const line = CliReport.usageLine(["tool"], [
      new CliError.InvalidValue({ option: "host", value: "\u001b[2J\nevil", expected: "a host", kind: "flag" }),
      new CliError.UnknownSubcommand({ subcommand: "x\u0007", suggestions: [] })
    ])
    expect(line).not.toMatch(/[\u0000-\u001f\u007f]/)
    expect(line.split("\n")).toHaveLength(1)
  })
})
