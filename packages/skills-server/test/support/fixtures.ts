/**
 * The spec §8 example skill (real digests and sizes) and small helpers to build skills.
 */
import { Skill } from "../../src/index.js"

export const pdfSkillMd =
  "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\n# PDF processing\n\nPick the matching template from `templates/`.\n"
export const invoiceMd = "# Invoice template\n\nTotal: {{amount}}\n"
export const logoPng = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

/** Spec §8: three files with known digests. */
export const pdfProcessing = Skill.make({
  path: "pdf-processing",
  files: { "SKILL.md": pdfSkillMd, "templates/invoice.md": invoiceMd, "assets/logo.png": logoPng }
})

export const pdfExpected = {
  uri: "skill://pdf-processing/SKILL.md",
  frontmatter: { name: "pdf-processing", description: "Extract, fill, and assemble PDF documents" },
  resources: [
    {
      uri: "skill://pdf-processing/SKILL.md",
      digest: "sha256:244a4672f7630fee6197bfcea1247d40e718645b4cbc9139bf2d20c9a3fac363",
      size: 149
    },
    {
      uri: "skill://pdf-processing/assets/logo.png",
      digest: "sha256:4c4b6a3be1314ab86138bef4314dde022e600960d8689a2c8f8631802d20dab6",
      size: 8
    },
    {
      uri: "skill://pdf-processing/templates/invoice.md",
      digest: "sha256:fa1fecce55816f4feabbcba416b81ca1bba3a94010dbac4115cbbe5c7f0455aa",
      size: 38
    }
  ]
}

export const skillMd = (name: string, description = `The ${name} skill`, extra = "") =>
  `---\nname: ${name}\ndescription: ${description}\n${extra}---\n\n# ${name}\n`

/** A static skill at `path` with a SKILL.md and the given extra files. */
export const simple = (path: string, files: Record<string, string | Uint8Array> = {}, listed = true) => {
  const name = path.split("/").at(-1)!
  return Skill.make({ path, listed, files: { "SKILL.md": skillMd(name), ...files } })
}
