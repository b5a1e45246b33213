import { project } from "../vitest.shared.js"

export default project("readme", { include: ["*.test.ts"] })
