// @ts-check
/**
 * What the site needs beyond TypeDoc's defaults, in one place:
 *
 * - The guides are the Markdown files the index (`docs/README.md`, the site's home page) links to,
 *   in the order it links them, each titled by its first `# ` heading and served at
 *   `guides/<file name>.html` (the `guides` router), so a guide's address outlives its title: the
 *   index is the one list of guides, and a guide it does not link is an error rather than a page
 *   nobody finds.
 * - A module's description is the first JSDoc comment of its file, as effect's docgen reads it
 *   (TypeDoc would want a `@module` tag there): the page of `SkillsClient` opens with what the
 *   module is for, not only with the `@since` of its `export * as` line.
 * - Members a class inherits from effect (`makeEffect`, `pipe`, `annotate`, ... of every
 *   `Schema.TaggedErrorClass` and `Context.Service`) are effect's to document: they are left out,
 *   so a class page shows what this project declares.
 * - Every export of a public module has `@since` (an error otherwise) and should have `@category`:
 *   `categoryCheck` says what a missing one does. `"count"` prints one line per package, `"list"`
 *   names each export, `"fail"` names each as an error, which fails the build (and so the docs
 *   check of `.ci/run`). The modules without any `@example` are named on one line.
 */
import { Application, Comment, Converter, KindRouter, MinimalSourceFile, ParameterType, ReflectionKind } from "typedoc"
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"

/** A relative link to a Markdown file beside the index: `[text](name.md)` or `(./name.md#anchor)`. */
const guideLink = /\]\((?:\.\/)?([^)/#\s]+\.md)(?:#[^)\s]*)?\)/g

/** @param {Application} app */
export function load(app) {
  app.options.addDeclaration({
    name: "categoryCheck",
    help: "What an export without @category does: count (one line per package), list (each named), fail (each an error)",
    type: ParameterType.Map,
    map: { count: "count", list: "list", fail: "fail" },
    defaultValue: "count"
  })

  // Packages are converted with options of their own (TypeDoc's defaults plus `packageOptions`),
  // so the root's value is read once, when the root's options are known.
  /** @type {"count" | "list" | "fail"} */
  let categoryCheck = "count"
  app.on(Application.EVENT_BOOTSTRAP_END, () => {
    categoryCheck = /** @type {"count" | "list" | "fail"} */ (app.options.getValue("categoryCheck"))
    const index = app.options.getValue("readme")
    const folder = path.dirname(index)
    const linked = [...new Set([...fs.readFileSync(index, "utf8").matchAll(guideLink)].map((match) => match[1]))]
    const missing = linked.filter((name) => !fs.existsSync(path.join(folder, name)))
    for (const name of missing) app.logger.error(`${path.relative(process.cwd(), index)} links to ${name}, which does not exist`)
    const unlinked = fs.readdirSync(folder).filter((name) => name.endsWith(".md") && name !== path.basename(index) && !linked.includes(name))
    for (const name of unlinked) app.logger.error(`${path.relative(process.cwd(), path.join(folder, name))} is a guide the index (${path.basename(index)}) does not link`)
    app.options.setValue("projectDocuments", linked.filter((name) => !missing.includes(name)).map((name) => path.join(folder, name)))
  })

  /** Each guide's file name without `.md`, by its reflection, titled by its heading. */
  const slugs = new WeakMap()
  app.converter.on(Converter.EVENT_CREATE_DOCUMENT, (_context, document) => {
    slugs.set(document, document.name)
    const heading = /^# (.+)$/m.exec(document.content.map((part) => part.text).join(""))
    if (heading === null) app.logger.error(`the guide ${document.name}.md has no "# " heading to title it`)
    else document.name = heading[1].replaceAll("`", "")
  })
  // The three packages are converted one by one and merged; the guides are added to the merged
  // project after them. A reader meets the guides first, then the packages in the order given.
  app.on(Application.EVENT_PROJECT_REVIVE, (project) => {
    const all = project.childrenIncludingDocuments ?? []
    project.childrenIncludingDocuments = [...all.filter((child) => child.isDocument()), ...all.filter((child) => !child.isDocument())]
  })
  app.renderer.defineRouter("guides", class extends KindRouter {
    /** @param {import("typedoc").Reflection} reflection */
    getIdealBaseName(reflection) {
      const slug = slugs.get(reflection)
      return slug === undefined ? super.getIdealBaseName(reflection) : `guides/${slug}`
    }
  })

  app.converter.on(Converter.EVENT_CREATE_DECLARATION, (context, reflection) => {
    if (!reflection.kindOf(ReflectionKind.Namespace)) return
    const symbol = context.getSymbolFromReflection(reflection)
    const module = symbol !== undefined && (symbol.flags & ts.SymbolFlags.Alias) !== 0 ? context.checker.getAliasedSymbol(symbol) : symbol
    const file = module?.declarations?.find(ts.isSourceFile)
    const first = file === undefined ? undefined : ts.getLeadingCommentRanges(file.text, 0)?.[0]
    if (file === undefined || first === undefined || !file.text.startsWith("/**", first.pos)) return
    // The description: the comment's text, leaders removed, up to its first block tag.
    const lines = file.text.slice(first.pos + 3, first.end - 2).split("\n").map((line) => line.replace(/^\s*\* ?/, ""))
    const tag = lines.findIndex((line) => /^@\w/.test(line))
    const description = lines.slice(0, tag < 0 ? lines.length : tag).join("\n").trim()
    if (description === "") return
    reflection.comment ??= new Comment()
    if (reflection.comment.summary.length > 0) return
    reflection.comment.summary = app.converter.parseRawComment(new MinimalSourceFile(description, file.fileName), context.project.files).content
  })

  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    const project = context.project
    for (const member of project.getReflectionsByKind(ReflectionKind.Property | ReflectionKind.Method | ReflectionKind.Accessor)) {
      const owner = project.getSymbolIdFromReflection(member)?.packageName
      if (owner !== undefined && owner !== project.packageName) project.removeReflection(member)
    }

    /** @param {import("typedoc").Reflection} reflection */
    const comments = (reflection) => {
      const own = reflection.comment === undefined ? [] : [reflection.comment]
      if (!reflection.isDeclaration()) return own
      const signatures = [...(reflection.signatures ?? []), ...[reflection.getSignature, reflection.setSignature].filter((s) => s !== undefined)]
      return [...own, ...signatures.flatMap((signature) => (signature.comment === undefined ? [] : [signature.comment]))]
    }
    /** @param {import("typedoc").Reflection} reflection @param {`@${string}`} tag */
    const has = (reflection, tag) => comments(reflection).some((comment) => comment.getTag(tag) !== undefined)
    /** @param {import("typedoc").Reflection} reflection */
    const where = (reflection) => {
      const source = reflection.isDeclaration() ? (reflection.sources?.[0] ?? reflection.signatures?.[0]?.sources?.[0]) : undefined
      // A type and a value may share a name (`CacheScope`): the kind tells them apart.
      const kind = ReflectionKind.singularString(reflection.kind).toLowerCase()
      return source === undefined ? ` (${kind})` : ` (${kind}, ${source.fileName}:${source.line})`
    }

    const modules = project.getChildrenByKind(ReflectionKind.Namespace)
    // A re-export is a reference to the declaration, documented (and checked) where it is declared.
    const exports = modules.flatMap((module) => module.children ?? []).filter((exported) => !exported.kindOf(ReflectionKind.Reference))
    for (const exported of exports.filter((exported) => !has(exported, "@since"))) {
      app.logger.error(`${project.name} ${exported.getFullName()} has no @since${where(exported)}`)
    }
    const uncategorized = exports.filter((exported) => !has(exported, "@category"))
    if (categoryCheck === "count") {
      if (uncategorized.length > 0) {
        app.logger.info(`${project.name}: ${uncategorized.length} of ${exports.length} exports have no @category (npm run docs:categories lists them)`)
      }
    } else {
      const report = categoryCheck === "fail" ? app.logger.error.bind(app.logger) : app.logger.info.bind(app.logger)
      for (const exported of uncategorized) report(`${project.name} ${exported.getFullName()} has no @category${where(exported)}`)
    }
    const withoutExample = modules.filter((module) => !(module.children ?? []).some((exported) => has(exported, "@example")))
    if (withoutExample.length > 0) {
      app.logger.info(`${project.name}: ${withoutExample.length} of ${modules.length} modules have no @example: ${withoutExample.map((module) => module.name).join(", ")}`)
    }
  })
}
