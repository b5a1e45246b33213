/**
 * Natural MIME types for the files a skill ships (spec R25: "other files use their natural MIME type").
 *
 * effect's `Mime` (the `mime` package's standard table) names the common kinds; a short table here
 * names what skills carry that it lacks or types otherwise (source code and scripts above all).
 *
 * @since 0.1.0
 */
import * as Mime from "effect/http/Mime"
import * as Option from "effect/Option"

/**
 * The MIME type served for a file whose kind neither table names.
 *
 * @since 0.1.0
 * @category utils
 */
export const fallback = "application/octet-stream"

// Text types carry no charset parameter: MCP text contents are always JSON strings, i.e. Unicode.
// The kinds skills ship that effect's standard table (mime's) lacks, or types otherwise: `.ts` is
// TypeScript here, not an MPEG stream; `.rs` Rust, not an RLS services list; YAML is
// `application/yaml` (RFC 9512).
const byExtension: ReadonlyMap<string, string> = new Map([
  // documents and prose
  ["mdx", "text/markdown"],
  ["rst", "text/x-rst"],
  ["adoc", "text/asciidoc"],
  ["docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"],
  ["xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"],
  ["pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation"],
  // data and configuration
  ["jsonl", "application/jsonl"],
  ["ndjson", "application/x-ndjson"],
  ["yaml", "application/yaml"],
  ["yml", "application/yaml"],
  ["cfg", "text/plain"],
  ["env", "text/plain"],
  ["graphql", "application/graphql"],
  ["gql", "application/graphql"],
  // scripts and source code
  ["cjs", "text/javascript"],
  ["jsx", "text/javascript"],
  ["ts", "text/typescript"],
  ["mts", "text/typescript"],
  ["cts", "text/typescript"],
  ["tsx", "text/typescript"],
  ["py", "text/x-python"],
  ["rb", "text/x-ruby"],
  ["go", "text/x-go"],
  ["rs", "text/x-rust"],
  ["java", "text/x-java"],
  ["kt", "text/x-kotlin"],
  ["c", "text/x-c"],
  ["h", "text/x-c"],
  ["cpp", "text/x-c++"],
  ["hpp", "text/x-c++"],
  ["cs", "text/x-csharp"],
  ["php", "application/x-httpd-php"],
  ["pl", "text/x-perl"],
  ["lua", "text/x-lua"],
  ["r", "text/x-r"],
  ["swift", "text/x-swift"],
  ["sh", "application/x-sh"],
  ["bash", "application/x-sh"],
  ["zsh", "application/x-sh"],
  ["ps1", "text/plain"],
  ["bat", "text/plain"],
  ["ipynb", "application/x-ipynb+json"],
  // images
  ["ico", "image/vnd.microsoft.icon"],
  // archives
  ["tgz", "application/gzip"],
  ["tar", "application/x-tar"],
  ["bz2", "application/x-bzip2"],
  ["xz", "application/x-xz"],
  ["7z", "application/x-7z-compressed"]
])

// Extension-less files whose name alone says what they are.
const byName: ReadonlyMap<string, string> = new Map([
  ["license", "text/plain"],
  ["licence", "text/plain"],
  ["copying", "text/plain"],
  ["notice", "text/plain"],
  ["readme", "text/plain"],
  ["changelog", "text/plain"],
  ["makefile", "text/x-makefile"],
  ["dockerfile", "text/x-dockerfile"]
])

/**
 * The natural MIME type of a file, from the last segment of its `/`-separated path (case-insensitive).
 * `SKILL.md` maps to `text/markdown` like every other Markdown file. Unknown kinds map to
 * {@link fallback} (`application/octet-stream`).
 *
 * @example
 * ```ts
 * import { MimeType } from "@mcp-skills/server"
 *
 * MimeType.fromPath("templates/invoice.md") // "text/markdown"
 * MimeType.fromPath("assets/logo.png")      // "image/png"
 * MimeType.fromPath("bin/tool")             // "application/octet-stream"
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromPath = (path: string): string => {
  const name = path.slice(path.lastIndexOf("/") + 1).toLowerCase()
  const dot = name.lastIndexOf(".")
  // A leading dot marks a hidden file (".env"), not an extension.
  if (dot <= 0) return byName.get(name) ?? fallback
  const extension = name.slice(dot + 1)
  return byExtension.get(extension) ?? Option.getOrElse(Mime.getType(extension), () => fallback)
}
