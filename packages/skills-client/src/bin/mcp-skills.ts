#!/usr/bin/env node
/**
 * The `mcp-skills` executable.
 *
 * @since 0.1.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cause from "effect/Cause"
import * as Exit from "effect/Exit"
import { main } from "../Cli.js"

NodeRuntime.runMain(main, {
  disableErrorReporting: false,
  // Exit explicitly: keep-alive sockets must not hold the process open after the work is done.
  // Ctrl-C (SIGINT, SIGTERM) is how `sync` is meant to stop: status 0, once it stopped cleanly.
  teardown: (exit) =>
    process.exit(
      Exit.isSuccess(exit)
        ? (typeof process.exitCode === "number" ? process.exitCode : 0)
        : Cause.hasInterruptsOnly(exit.cause)
        ? 0
        : 1
    )
})
