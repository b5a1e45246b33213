#!/usr/bin/env node
/**
 * Client entry for the official conformance suite: maps `MCP_CONFORMANCE_SCENARIO` onto the
 * `mcp-skills` command line, with the mock server URL as the last argument.
 * `sep-2640-client-no-prefetch` lists; `sep-2640-client-verify-*` pulls every skill into a
 * temporary folder, which exits 1 when any skill fails verification.
 *
 * @since 0.1.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { CliReport } from "@mcp-skills/core"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Effect from "effect/Effect"
import { Command } from "effect/cli"
import { command } from "../Cli.js"

const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? ""
const url = process.argv[process.argv.length - 1] ?? ""
const version = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION
const protocol = version === "2025-11-25" || version === "2026-07-28" ? ["--protocol", version] : []

const into = mkdtempSync(join(tmpdir(), "mcp-skills-conformance-"))
const args = scenario === "sep-2640-client-no-prefetch"
  ? ["list", url, ...protocol]
  : scenario.startsWith("sep-2640-client-verify-")
  ? ["pull", url, "--all", "--into", into, ...protocol]
  : undefined

if (args === undefined) {
  process.stderr.write(`conformance-client: unknown scenario ${JSON.stringify(scenario)}\n`)
  process.exit(2)
}

CliReport.runMain(NodeRuntime.runMain)(
  Command.runWith(command, { version: "0.1.0" })(args).pipe(
    Effect.provide(NodeServices.layer),
    Effect.ensuring(Effect.sync(() => rmSync(into, { recursive: true, force: true })))
  )
)
