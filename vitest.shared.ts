import * as path from "node:path"
import { defineProject, type UserWorkspaceConfig } from "vitest/config"

const root = path.dirname(new URL(import.meta.url).pathname)

/**
 * Test projects import sibling packages from their TypeScript sources, so a test run never
 * depends on a stale `dist`.
 */
export const project = (name: string, overrides: UserWorkspaceConfig["test"] = {}) =>
  defineProject({
    resolve: {
      alias: {
        "@mcp-skills/core": path.join(root, "packages/skills-core/src/index.ts"),
        "@mcp-skills/server": path.join(root, "packages/skills-server/src/index.ts"),
        "@mcp-skills/client": path.join(root, "packages/skills-client/src/index.ts")
      }
    },
    test: {
      name,
      include: ["test/**/*.test.ts"],
      testTimeout: 60_000,
      hookTimeout: 60_000,
      ...overrides
    }
  })
