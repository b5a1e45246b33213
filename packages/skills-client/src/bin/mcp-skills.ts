#!/usr/bin/env node
/**
 * The `mcp-skills` executable.
 *
 * @since 0.1.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { CliReport } from "@mcp-skills/core"
import { main } from "../Cli.js"

CliReport.runMain(NodeRuntime.runMain)(main)
