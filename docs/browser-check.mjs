// @ts-check
/**
 * Reads the built site as a person would, in Debian's Chromium driven by playwright-core: serves
 * SITE on 127.0.0.1 (a free port), opens every page reachable from the index, and checks that
 * every internal link resolves (no 404, every #anchor exists on its page), that no page throws,
 * and that typing `SkillsClient` into the search box offers the SkillsClient reference page,
 * which opens on a click. Screenshots of the index, of that reference page and of the search go
 * to SHOTS. Each check prints `ok` or `FAIL` and counts as one test; with RESULTS the counts are
 * written there as JSON for `.ci/run`'s total.
 *
 *   node docs/browser-check.mjs SITE SHOTS [RESULTS]
 */
import { chromium } from "playwright-core"
import * as fs from "node:fs"
import * as http from "node:http"
import * as path from "node:path"

const [siteArg, shotsArg, results] = process.argv.slice(2)
if (siteArg === undefined || shotsArg === undefined) {
  console.error("usage: node docs/browser-check.mjs SITE SHOTS [RESULTS]")
  process.exit(2)
}
const site = path.resolve(siteArg)
const shots = path.resolve(shotsArg)
fs.mkdirSync(shots, { recursive: true })
const chromiumPath = process.env.CHROMIUM ?? "/usr/bin/chromium"

const types = /** @type {Record<string, string>} */ ({
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript",
  ".css": "text/css",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".json": "application/json",
  ".md": "text/markdown; charset=utf-8",
  ".ts": "text/plain; charset=utf-8"
})

/** Every path the browser asked for that is not in the site, with the page that asked. */
const missing = /** @type {Array<string>} */ ([])

// A plain static server over the site folder: what a person gets from any web server.
const server = http.createServer((request, response) => {
  const url = new URL(request.url ?? "/", "http://localhost")
  let file = path.join(site, decodeURIComponent(url.pathname))
  if (!file.startsWith(site)) file = site + "/..missing"
  if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, "index.html")
  if (!fs.existsSync(file)) {
    missing.push(`${url.pathname} (asked by ${request.headers.referer ?? "no page"})`)
    response.writeHead(404).end()
    return
  }
  response.writeHead(200, { "content-type": types[path.extname(file)] ?? "application/octet-stream" })
  fs.createReadStream(file).pipe(response)
})
await new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(undefined)))
const address = server.address()
if (address === null || typeof address === "string") throw new Error("the server has no port")
const origin = `http://127.0.0.1:${address.port}`
console.log(`serving ${path.relative(process.cwd(), site)} at ${origin}`)

let passed = 0
let failed = 0
/** @param {string} name @param {() => Promise<Array<string>>} run the problems found, none when it holds */
const check = async (name, run) => {
  const problems = await run().catch((error) => [`threw: ${error instanceof Error ? error.stack : String(error)}`])
  if (problems.length === 0) {
    passed++
    console.log(`ok   ${name}`)
  } else {
    failed++
    console.log(`FAIL ${name}`)
    for (const problem of problems.slice(0, 40)) console.log(`     ${problem}`)
    if (problems.length > 40) console.log(`     ... and ${problems.length - 40} more`)
  }
}

// The flags the machine's probe used: without the background-networking ones, Chromium keeps
// dialling Google's hosts, which a closed network refuses. playwright starts it headless with a
// new, empty profile (--user-data-dir) of its own.
const browser = await chromium.launch({
  executablePath: chromiumPath,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
})
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  /** Errors thrown by a page's scripts, or logged as errors, with the page. */
  const scriptErrors = /** @type {Array<string>} */ ([])
  /** A browser tab that reports its pages' script errors. */
  const tab = async (/** @type {import("playwright-core").BrowserContext} */ within = context) => {
    const opened = await within.newPage()
    opened.on("pageerror", (error) => scriptErrors.push(`${opened.url()}: ${error.message}`))
    opened.on("console", (message) => {
      if (message.type() === "error") scriptErrors.push(`${opened.url()}: ${message.text()}`)
    })
    return opened
  }
  let page = await tab()

  /**
   * A page as a person sees it: TypeDoc draws the navigation tree (the same on every page) from a
   * script once the page has loaded, and only then shows the page.
   * @param {string} url
   */
  const show = async (url) => {
    const response = await page.goto(url, { waitUntil: "load" })
    await page.waitForFunction(() => document.body.style.display !== "none" && document.querySelector(".site-menu nav a, #tsd-nav-container a") !== null)
    return response
  }
  /**
   * The ids of the page open in a tab, and the links on it to this site; with `navigation` false,
   * not those of the navigation tree, which is the same on every page and read once.
   */
  const read = (/** @type {import("playwright-core").Page} */ tab = page, navigation = true) =>
    tab.evaluate(({ origin, navigation }) => ({
      ids: [...document.querySelectorAll("[id], a[name]")].map((element) => element.id || element.getAttribute("name") || ""),
      links: [...new Set([...document.querySelectorAll(navigation ? "a[href]" : "a[href]:not(.site-menu a)")]
        .map((a) => /** @type {HTMLAnchorElement} */ (a).href)
        .filter((href) => href.startsWith(`${origin}/`)))]
    }), { origin, navigation })

  /** Each page's ids, and its internal links. @type {Map<string, { ids: Set<string>, links: Array<string> }>} */
  const pages = new Map()
  /** @type {Array<string>} */
  const statusProblems = []
  const queue = /** @type {Array<string>} */ ([])
  const seen = new Set()
  /** @param {ReadonlyArray<string>} links */
  const follow = (links) => {
    for (const link of links) {
      const target = link.split("#")[0]
      if (target.endsWith(".html") && !seen.has(target)) {
        seen.add(target)
        queue.push(target)
      }
    }
  }
  await check("the site opens at its index, with its navigation drawn", async () => {
    const response = await show(`${origin}/`)
    follow([`${origin}/index.html`, ...(await read()).links])
    return response?.status() === 200 ? [] : [`GET / answered ${response?.status()}`]
  })
  // Every other page is read once it has loaded, scripts run: its content links are in its HTML,
  // and its navigation is the index's. A few tabs read at once; a tab that finds the queue empty
  // waits while another may still add to it.
  const started = Date.now()
  let reading = 0
  const crawl = async (/** @type {import("playwright-core").Page} */ tab) => {
    while (queue.length > 0 || reading > 0) {
      const url = queue.shift()
      if (url === undefined) {
        await new Promise((resolve) => setTimeout(resolve, 20))
        continue
      }
      reading++
      try {
        const response = await tab.goto(url, { waitUntil: "load" })
        if (response?.status() !== 200) {
          statusProblems.push(`${url} answered ${response?.status()}`)
          continue
        }
        const found = await read(tab, false)
        pages.set(url, { ids: new Set(found.ids), links: found.links })
        follow(found.links)
      } finally {
        reading--
      }
    }
  }
  const tabs = [page, await tab(), await tab()]
  await Promise.all(tabs.map(crawl))
  await Promise.all(tabs.slice(1).map((other) => other.close()))
  console.log(`     read ${pages.size} pages in ${Math.round((Date.now() - started) / 1000)} s, ${tabs.length} tabs at once`)

  await check(`every page linked from the site loads (${pages.size} pages)`, async () => statusProblems)

  await check("every internal link resolves, to a page, a file or an anchor that exists", async () => {
    const problems = []
    const files = new Map()
    for (const [url, { links }] of pages) {
      for (const link of new Set(links)) {
        const [target, anchor] = link.split("#")
        if (!target.endsWith(".html") && !files.has(target)) files.set(target, (await fetch(target)).status)
        if (!target.endsWith(".html") && files.get(target) !== 200) problems.push(`${url} links to ${link}: ${files.get(target)}`)
        if (anchor === undefined || anchor === "") continue
        const ids = pages.get(target)?.ids
        if (target.endsWith(".html") && ids !== undefined && !ids.has(decodeURIComponent(anchor))) problems.push(`${url} links to ${link}: no #${anchor} there`)
      }
    }
    return problems
  })

  await check("no request for something the site lacks (scripts, styles, icons, pages)", async () => missing)

  // What follows is a first visit: a new profile, so nothing the crawl opened or closed in the
  // navigation (TypeDoc keeps that in the page's storage) shows in the screenshots.
  await context.close()
  const visit = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  page = await tab(visit)

  await check("the navigation lists the guides first, in the index's order, each a page that was read", async () => {
    await show(`${origin}/index.html`)
    /** @param {string} selector */
    const guides = (selector) =>
      page.evaluate((selector) => [...new Set([...document.querySelectorAll(selector)].map((a) => /** @type {HTMLAnchorElement} */ (a).href.split("#")[0]))], selector)
    const linked = await guides(".col-content a[href*='guides/']")
    const listed = await guides(".site-menu a[href*='guides/']")
    const first = await page.evaluate(() => [...document.querySelectorAll(".site-menu nav a")].slice(1, 2).map((a) => /** @type {HTMLAnchorElement} */ (a).href.split("#")[0]))
    await page.screenshot({ path: path.join(shots, "index.png"), fullPage: true })
    const problems = linked.length === 0 ? ["the index links no guide"] : []
    if (JSON.stringify(listed) !== JSON.stringify(linked)) problems.push(`the index links ${JSON.stringify(linked)}, the navigation lists ${JSON.stringify(listed)}`)
    if (first[0] !== linked[0]) problems.push(`the navigation starts with ${first[0]} (after the home link), not with the first guide`)
    for (const link of linked) if (!pages.has(link)) problems.push(`the index links ${link}, which was not read`)
    return problems
  })

  await check("searching for SkillsClient offers its reference page, which opens on a click", async () => {
    await show(`${origin}/index.html`)
    await page.click("#tsd-search-trigger")
    await page.locator("#tsd-search-input").pressSequentially("SkillsClient", { delay: 50 })
    const results = page.locator("#tsd-search-results li")
    await results.first().waitFor({ timeout: 10_000 })
    const offered = await results.allInnerTexts()
    await page.screenshot({ path: path.join(shots, "search.png") })
    // A result names its module too: `@mcp-skills/client.SkillsClient`.
    const first = results.filter({ hasText: /(^|\.)SkillsClient$/ }).first()
    if ((await first.count()) === 0) return [`the search offered ${JSON.stringify(offered.slice(0, 10))}, not SkillsClient`]
    await first.click()
    await page.waitForURL(/SkillsClient/)
    await page.waitForFunction(() => document.body.style.display !== "none")
    const title = await page.locator(".tsd-page-title h1").innerText()
    await page.screenshot({ path: path.join(shots, "reference.png"), fullPage: true })
    return /SkillsClient/.test(title) ? [] : [`the search result opened ${page.url()}, titled ${JSON.stringify(title)}`]
  })

  await check("no page throws or logs an error in the console", async () => scriptErrors)
} finally {
  await browser.close()
  server.close()
}

console.log(`browser check: ${passed} passed, ${failed} failed; screenshots in ${path.relative(process.cwd(), shots)}`)
if (results !== undefined) {
  fs.writeFileSync(results, JSON.stringify({ numPassedTests: passed, numFailedTests: failed, success: failed === 0 }))
}
process.exitCode = failed === 0 ? 0 : 1
