/**
 * The one way changes enter a registry (`SkillRegistry.make`): every change is a job that one
 * fiber runs, one at a time and in the order asked, so each commit's `before` is exactly what the
 * commit before it left. A caller waits for its own job's outcome; one interrupted before its job
 * starts withdraws it.
 *
 * Reloads are coalesced and paced (`coalesce`): a request made while a reload is pending (asked
 * for, not yet reading its source) joins it, and a reload starts no sooner after the last one
 * ended than that one took. However many requests arrive, reloading then takes at most half the
 * time, and any number of requests made while one reload runs cost one more. Notices that carry
 * no change of their own (a family's instances changed) are coalesced by key (`once`).
 *
 * Jobs and reloads run in the intake's fiber, with the context its maker had: what a change costs
 * and logs belongs to the registry, not to whichever caller happened to ask.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as ServerLimits from "../ServerLimits.js"

interface Job {
  readonly run: Effect.Effect<void>
  /** Ends the wait of its caller when the intake closes before running it. */
  readonly abandon: Effect.Effect<unknown>
}

/**
 * A request for a coalesced reload: whether it joined one already asked for (whose asker reports
 * it), and the outcome of the reload that covers it.
 */
export interface Pending<A, E> {
  readonly joined: boolean
  readonly result: Effect.Effect<A, E>
}

/** The serial runner of one registry. */
export interface Intake {
  /** Runs `job` alone, after every job asked for before it, and answers its outcome. */
  readonly run: <A, E>(job: Effect.Effect<A, E>) => Effect.Effect<A, E>
  /** Queues `job` unless one with the same `key` is queued and not started; nobody waits for it. */
  readonly once: (key: string, job: Effect.Effect<void>) => Effect.Effect<void>
}

/** An intake running for as long as the scope is open. */
export const make: Effect.Effect<Intake, never, Scope.Scope> = Effect.gen(function*() {
  const jobs = yield* Effect.acquireRelease(
    Queue.unbounded<Job>(),
    (queue) => Effect.flatMap(Queue.clear(queue), (left) => Effect.andThen(Effect.forEach(left, (job) => job.abandon), Queue.shutdown(queue)))
  )
  yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(jobs), (job) => job.run)))
  const keys = new Set<string>()
  return {
    run: <A, E>(job: Effect.Effect<A, E>) =>
      Effect.suspend(() => {
        const done = Deferred.makeUnsafe<A, E>()
        let state: "queued" | "started" | "withdrawn" = "queued"
        const queued = Queue.offerUnsafe(jobs, {
          run: Effect.suspend(() => {
            if (state === "withdrawn") return Effect.void
            state = "started"
            return Effect.flatMap(Effect.exit(job), (exit) => Deferred.done(done, exit)).pipe(
              Effect.onInterrupt(() => Deferred.interrupt(done)),
              Effect.asVoid
            )
          }),
          abandon: Deferred.interrupt(done)
        })
        if (!queued) return Effect.interrupt
        return Effect.onInterrupt(Deferred.await(done), () =>
          Effect.sync(() => {
            if (state === "queued") state = "withdrawn"
          }))
      }),
    once: (key, job) =>
      Effect.sync(() => {
        if (keys.has(key)) return
        keys.add(key)
        Queue.offerUnsafe(jobs, {
          run: Effect.suspend(() => {
            keys.delete(key)
            return job
          }),
          abandon: Effect.void
        })
      })
  }
})

/**
 * `work` as a coalesced, paced reload (see the module description), run in the scope; `trigger`
 * is the first request's of those a reload covers.
 */
export const coalesce = <T, A, E>(
  work: (trigger: T) => Effect.Effect<A, E>
): Effect.Effect<(trigger: T) => Effect.Effect<Pending<A, E>>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    let pending: { readonly trigger: T; readonly done: Deferred.Deferred<A, E> } | undefined
    let running = false
    let closed = false
    // `Clock` millis before which the next reload does not start.
    let ready = 0
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        closed = true
        return pending === undefined ? Effect.void : Deferred.interrupt(pending.done)
      })
    )
    const cycle = Effect.gen(function*() {
      const wait = ready - (yield* Clock.currentTimeMillis)
      if (wait > 0) yield* Effect.sleep(wait)
      // Every request made until now is covered: none of them saw the source being read.
      const covered = pending!
      pending = undefined
      const start = yield* Clock.currentTimeMillis
      yield* Effect.exit(work(covered.trigger)).pipe(
        Effect.flatMap((exit) => Deferred.done(covered.done, exit)),
        Effect.onInterrupt(() => Deferred.interrupt(covered.done))
      )
      const end = yield* Clock.currentTimeMillis
      ready = end + ServerLimits.ReloadRest * (end - start)
    })
    const loop: Effect.Effect<void> = Effect.suspend(() => {
      if (pending !== undefined) return Effect.andThen(cycle, loop)
      running = false
      return Effect.void
    })
    return (trigger: T) =>
      Effect.suspend((): Effect.Effect<Pending<A, E>> => {
        if (closed) return Effect.succeed({ joined: false, result: Effect.interrupt })
        if (pending !== undefined) return Effect.succeed({ joined: true, result: Deferred.await(pending.done) })
        const done = Deferred.makeUnsafe<A, E>()
        pending = { trigger, done }
        const asked: Pending<A, E> = { joined: false, result: Deferred.await(done) }
        if (running) return Effect.succeed(asked)
        running = true
        return Effect.as(Effect.forkIn(loop, scope), asked)
      })
  })
