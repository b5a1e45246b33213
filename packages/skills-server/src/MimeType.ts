/**
 * Natural MIME types for the files a skill ships (spec R25: "other files use their natural MIME type").
 *
 * A small fixed table rather than a dependency: skills carry a handful of well-known file kinds, and a
 * stable, reviewable mapping matters more here than exhaustive coverage.
 *
 * @since 0.1.0
 */

/**
 * The MIME type served for a file whose extension is not in the table.
 *
 * @since 0.1.0
 */
export const fallback = "application/octet-stream"

// Text types carry no charset parameter: MCP text contents are always JSON strings, i.e. Unicode.
const byExtension: ReadonlyMap<string, string> = new Map([
  // documents and prose
  ["md", "text/markdown"],
  ["markdown", "text/markdown"],
  ["mdx", "text/markdown"],
  ["txt", "text/plain"],
  ["text", "text/plain"],
  ["rst", "text/x-rst"],
  ["adoc", "text/asciidoc"],
  ["html", "text/html"],
  ["htm", "text/html"],
  ["css", "text/css"],
  ["csv", "text/csv"],
  ["tsv", "text/tab-separated-values"],
  ["pdf", "application/pdf"],
  ["rtf", "application/rtf"],
  ["docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"],
  ["xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"],
  ["pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation"],
  // data and configuration
  ["json", "application/json"],
  ["jsonl", "application/jsonl"],
  ["ndjson", "application/x-ndjson"],
  ["yaml", "application/yaml"],
  ["yml", "application/yaml"],
  ["toml", "application/toml"],
  ["xml", "application/xml"],
  ["ini", "text/plain"],
  ["cfg", "text/plain"],
  ["conf", "text/plain"],
  ["env", "text/plain"],
  ["sql", "application/sql"],
  ["graphql", "application/graphql"],
  ["gql", "application/graphql"],
  // scripts and source code
  ["js", "text/javascript"],
  ["mjs", "text/javascript"],
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
  ["wasm", "application/wasm"],
  // images
  ["png", "image/png"],
  ["jpg", "image/jpeg"],
  ["jpeg", "image/jpeg"],
  ["gif", "image/gif"],
  ["webp", "image/webp"],
  ["avif", "image/avif"],
  ["bmp", "image/bmp"],
  ["ico", "image/vnd.microsoft.icon"],
  ["svg", "image/svg+xml"],
  ["tif", "image/tiff"],
  ["tiff", "image/tiff"],
  // fonts
  ["woff", "font/woff"],
  ["woff2", "font/woff2"],
  ["ttf", "font/ttf"],
  ["otf", "font/otf"],
  // audio and video
  ["mp3", "audio/mpeg"],
  ["wav", "audio/wav"],
  ["ogg", "audio/ogg"],
  ["mp4", "video/mp4"],
  ["webm", "video/webm"],
  // archives
  ["zip", "application/zip"],
  ["gz", "application/gzip"],
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
 */
export const fromPath = (path: string): string => {
  const name = path.slice(path.lastIndexOf("/") + 1).toLowerCase()
  const dot = name.lastIndexOf(".")
  // A leading dot marks a hidden file (".env"), not an extension.
  if (dot <= 0) return byName.get(name) ?? fallback
  return byExtension.get(name.slice(dot + 1)) ?? fallback
}
