/**
 * `npm run test:cluster`: the cluster test alone (HAProxy, Redis and three replicas), kept out of
 * `npm test` so a machine without those packages still passes it.
 */
import { project } from "../vitest.shared.js"

export default project("cluster", {
  include: ["deploy/test/cluster.test.ts"],
  testTimeout: 300_000,
  hookTimeout: 120_000
})
