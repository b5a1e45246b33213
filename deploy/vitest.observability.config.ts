/**
 * `npm run test:observability`: the server scraped by a real Prometheus and exporting to a
 * loopback OTLP receiver, kept out of `npm test` so a machine without Debian's `prometheus`
 * still passes it.
 */
import { project } from "../vitest.shared.js"

export default project("observability", {
  include: ["deploy/test/observability.test.ts"],
  testTimeout: 120_000,
  hookTimeout: 60_000
})
