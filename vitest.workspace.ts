/**
 * The one list of test projects. `vitest.config.ts` feeds it to `test.projects`, because vitest 4+
 * no longer reads a workspace file on its own.
 */
export default [
  "packages/skills-core",
  "packages/skills-server",
  "packages/skills-client",
  "demo",
  "test"
]
