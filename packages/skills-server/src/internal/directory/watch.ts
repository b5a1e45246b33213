/**
 * Watching a skills folder so that no edit is lost.
 *
 * Node's recursive watcher on Linux watches every file's inode: a file replaced by rename (editors,
 * `sed -i`, `git checkout`) is seen once, then its watch points at a deleted inode and later
 * replacements of that path go unseen; it also re-reads the whole folder synchronously on every
 * event, which froze the server for a minute under a storm of file creations, and stops for good on
 * a symbolic link loop. So this module watches folders, not files: one non-recursive watch per
 * visible folder, whose events name the entry that changed, whatever inode it has now. An event
 * only marks its path "to check"; a folder that appears, disappears or is replaced by rename gets
 * its watches re-armed before the reload reads it. A periodic stamp check (size, modification time,
 * inode of every file) is the safety net for file systems whose events are unreliable.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Latch from "effect/Latch"
import type * as Scope from "effect/Scope"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { isWalkedIn, isWalkedPath } from "./scan.js"
import * as ServerLimits from "../../ServerLimits.js"

/**
 * The watches of one root: every visible folder below it (symbolic links to folders are not
 * followed, as the scan does not follow them), each watched by itself.
 */
const watchTree = (root: string, notify: (path: string) => void, warn: (line: string) => void) => {
  // A folder's path relative to the root, `/`-separated, as the walk's rules take it.
  const relativeOf = (path: string) => NodePath.relative(root, path).split(NodePath.sep).join("/")
  const watchers = new Map<string, { readonly watcher: NodeFs.FSWatcher; readonly ino: number }>()
  const warned = new Set<string>()

  const close = (folder: string) => {
    const prefix = folder + NodePath.sep
    for (const [path, entry] of watchers) {
      if (path !== folder && !path.startsWith(prefix)) continue
      entry.watcher.close()
      watchers.delete(path)
    }
  }

  const watchOne = (folder: string, ino: number) => {
    try {
      const watcher = NodeFs.watch(folder, { persistent: false }, (_event, name) => {
        // No name: the platform could not say what changed, so the whole folder is checked.
        if (name === null) return notify(folder)
        // What the walk looks at, a skill's signatures file included (hidden, never served, but
        // stamped like the skill's files).
        if (isWalkedIn(relativeOf(folder), name)) notify(NodePath.join(folder, name))
      })
      watcher.on("error", () => {
        // The folder went away or cannot be watched any more: check it, which re-arms or drops it.
        if (watchers.get(folder)?.watcher === watcher) watchers.delete(folder)
        watcher.close()
        notify(folder)
      })
      watchers.set(folder, { watcher, ino })
    } catch (error) {
      // Out of watches (ENOSPC) or file handles (EMFILE): said once per cause; the periodic check
      // still sees this folder's changes.
      const code = (error as NodeJS.ErrnoException).code ?? String(error)
      if (!warned.has(code)) {
        warned.add(code)
        warn(`cannot watch ${folder} (${code}); its changes are picked up by the periodic check`)
      }
    }
  }

  // Watches `folder` and every visible folder below it, level by level: a folder is watched before
  // it is listed, so an entry created after the listing raises an event.
  const arm = async (folder: string, ino: number) => {
    let level: Array<{ readonly path: string; readonly ino: number }> = [{ path: folder, ino }]
    while (level.length > 0) {
      const next: Array<{ readonly path: string; readonly ino: number }> = []
      await Promise.all(level.map(async (entry) => {
        watchOne(entry.path, entry.ino)
        const children = await NodeFs.promises.readdir(entry.path, { withFileTypes: true }).catch(() => [])
        await Promise.all(children.map(async (child) => {
          if (!child.isDirectory() || !isWalkedIn(relativeOf(entry.path), child.name)) return
          const path = NodePath.join(entry.path, child.name)
          const info = await NodeFs.promises.lstat(path).catch(() => undefined)
          if (info?.isDirectory() === true) next.push({ path, ino: info.ino })
        }))
      }))
      level = next
    }
  }

  const inside = (path: string) => {
    const relative = NodePath.relative(root, path)
    return !relative.startsWith("..") && !NodePath.isAbsolute(relative) && (relative === "" || isWalkedPath(relative.split(NodePath.sep).join("/")))
  }

  // What the events named may be folders that appeared, went away or were replaced by rename;
  // their parents may be folders whose watch was lost (a missed event). Both get their watches set
  // right before the reload reads them.
  const rearm = async (paths: Iterable<string>) => {
    const candidates = new Set<string>()
    for (const path of paths) {
      if (!inside(path)) continue
      candidates.add(path)
      const parent = NodePath.dirname(path)
      if (path !== root && !watchers.has(parent)) candidates.add(parent)
    }
    await Promise.all([...candidates].map(async (path) => {
      const info = await NodeFs.promises.lstat(path).catch(() => undefined)
      const watched = watchers.get(path)
      if (info === undefined || !info.isDirectory()) {
        if (watched !== undefined) close(path)
        return
      }
      if (watched !== undefined && watched.ino === info.ino) return
      close(path)
      await arm(path, info.ino)
    }))
  }

  return {
    start: Effect.promise(async () => {
      const info = await NodeFs.promises.stat(root).catch(() => undefined)
      if (info?.isDirectory() === true) await arm(root, info.ino)
    }),
    rearm: (paths: Iterable<string>) => Effect.promise(() => rearm(paths)),
    closeAll: Effect.sync(() => close(root)),
    size: () => watchers.size
  }
}

/**
 * What the watch loop needs from a source: its roots, a reload that re-checks the named paths (all
 * of them, when the set is `undefined`), and the stamp check.
 */
export interface Watched {
  readonly roots: ReadonlyArray<string>
  /** Reloads; `paths` are absolute paths events named since the last reload. */
  readonly reload: (paths: ReadonlySet<string> | undefined) => Effect.Effect<void>
  /** Absolute paths whose stamps differ from the last scan (`missed`), or that must be read again (`racy`). */
  readonly check: Effect.Effect<{ readonly missed: ReadonlyArray<string>; readonly racy: ReadonlyArray<string> }>
  readonly warn: (line: string) => Effect.Effect<void>
}

/**
 * Options of {@link run}.
 */
export interface Timing {
  /** Quiet time after the last event before reloading. */
  readonly debounce: Duration.Duration
  /** Under a continuous stream of events, the longest a change waits for its reload. */
  readonly maxDelay: Duration.Duration
  /** Interval of the stamp check, or `undefined` for none. */
  readonly sweep: Duration.Duration | undefined
}

// An event on a folder covers everything below it.
const covered = (path: string, sets: ReadonlyArray<ReadonlySet<string>>) => {
  for (let at = path, up = NodePath.dirname(at); ; at = up, up = NodePath.dirname(at)) {
    if (sets.some((set) => set.has(at))) return true
    if (up === at) return false
  }
}


/**
 * Watches every root until the scope closes: events are coalesced into one reload per quiet
 * moment, events arriving during a reload cause another one, and the stamp check reports (and
 * repairs) any change the events missed. Succeeds once every root is watched.
 */
export const run = (watched: Watched, timing: Timing): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const pending = new Set<string>()
    // Taken by the round in progress, until its reload is done.
    let inFlight: ReadonlySet<string> | "all" = new Set()
    // Named by events while a stamp check runs: the check saw them, but so did the events.
    let duringCheck: Set<string> | undefined
    let overflow = false
    let events = 0
    const wake = Latch.makeUnsafe(false)
    const warnings: Array<string> = []
    const notify = (path: string) => {
      events++
      duringCheck?.add(path)
      if (pending.size < ServerLimits.MaxEventPaths) pending.add(path)
      else overflow = true
      wake.openUnsafe()
    }
    const warn = (line: string) => {
      warnings.push(line)
      wake.openUnsafe()
    }
    const trees = watched.roots.map((root) => watchTree(root, notify, warn))
    yield* Effect.addFinalizer(() => Effect.forEach(trees, (tree) => tree.closeAll, { discard: true }))
    yield* Effect.forEach(trees, (tree) => tree.start, { discard: true })

    const flushWarnings = Effect.suspend(() => Effect.forEach(warnings.splice(0), watched.warn, { discard: true }))

    // Waits for a quiet moment: no event for `debounce`, or `maxDelay` after the round began.
    const settle = Effect.gen(function*() {
      const start = yield* Clock.currentTimeMillis
      while (true) {
        const seen = events
        yield* Effect.sleep(timing.debounce)
        if (events === seen) return
        if ((yield* Clock.currentTimeMillis) - start >= Duration.toMillis(timing.maxDelay)) return
      }
    })

    const round = Effect.gen(function*() {
      yield* wake.await
      wake.closeUnsafe()
      yield* flushWarnings
      if (pending.size === 0 && !overflow) return
      yield* settle
      const paths = new Set(pending)
      const all = overflow
      pending.clear()
      overflow = false
      inFlight = all ? "all" : paths
      yield* Effect.forEach(trees, (tree) => tree.rearm(paths), { discard: true })
      yield* flushWarnings
      yield* watched.reload(all ? undefined : paths)
      inFlight = new Set()
    })
    // A round that fails for a reason of its own is said, and watching goes on.
    const survive = (what: string, pause: Effect.Effect<void> = Effect.void) =>
      Effect.catchCause((cause: Cause.Cause<unknown>) =>
        Cause.hasInterrupts(cause)
          ? Effect.failCause(cause)
          : Effect.andThen(watched.warn(`${what} failed, watching goes on: ${Cause.pretty(cause)}`), pause)
      )
    yield* Effect.forkScoped(Effect.forever(round.pipe(survive("a reload round"))))

    if (timing.sweep === undefined) return
    const interval = Duration.toMillis(timing.sweep)
    const sweep = Effect.gen(function*() {
      const start = yield* Clock.currentTimeMillis
      // Events named before the check began, and those arriving during it: their reload may come
      // after the check compared the files with the last scan, so their changes were not missed.
      const before = overflow ? "all" : inFlight
      const seen = new Set<string>(pending)
      if (before !== "all") for (const path of before) seen.add(path)
      duringCheck = seen
      const { missed, racy } = yield* watched.check
      const took = (yield* Clock.currentTimeMillis) - start
      // Events trail the writes they report: give those of the changes just seen time to arrive.
      if (missed.length > 0) yield* Effect.sleep(timing.debounce)
      duringCheck = undefined
      // A change whose event arrived, or is waiting for its reload, was not missed.
      const known = inFlight
      const unseen = known === "all" || before === "all" ? [] : missed.filter((path) => !covered(path, [seen, pending, known]))
      if (unseen.length > 0) {
        const shown = unseen.slice(0, 3).join(", ") + (unseen.length > 3 ? `, and ${unseen.length - 3} more` : "")
        yield* watched.warn(`the periodic check found ${unseen.length} change(s) no file event reported (${shown}); reloading`)
        for (const path of unseen) pending.add(path)
        yield* Effect.forEach(trees, (tree) => tree.rearm(unseen), { discard: true })
      }
      for (const path of racy) pending.add(path)
      if (unseen.length + racy.length > 0) {
        events++
        wake.openUnsafe()
      }
      yield* Effect.sleep(Math.max(interval, took * ServerLimits.SweepShare))
    })
    yield* Effect.forkScoped(Effect.sleep(interval).pipe(Effect.andThen(Effect.forever(sweep.pipe(survive("the periodic check", Effect.sleep(interval)))))))
  })

/**
 * Calls `changed` whenever the folder of `path` says an entry of that name changed (editors replace
 * files by rename, so the folder is watched, not the file), until the scope closes.
 */
export const watchEntry = (path: string, changed: () => void): Effect.Effect<void, never, Scope.Scope> => {
  const name = NodePath.basename(path)
  return Effect.asVoid(Effect.acquireRelease(
    Effect.sync(() =>
      NodeFs.watch(NodePath.dirname(NodePath.resolve(path)), { persistent: false }, (_event, file) => {
        if (file === null || file === name) changed()
      }).on("error", () => {})
    ),
    (watcher) => Effect.sync(() => watcher.close())
  ))
}
