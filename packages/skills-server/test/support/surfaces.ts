/**
 * Looks at a server through all five skills surfaces at once: `skills/list` (every page),
 * `resources/list`, `skills/get`, `resources/read` of every file and `resources/directory/read` of
 * every directory, keeping every response's text so tests can search it for leaks.
 */
import * as Effect from "effect/Effect"
import type { Client } from "./wire.js"

/** What a test knows about one skill it registered. */
export interface Probe {
  readonly uri: string
  readonly files: ReadonlyArray<string>
  readonly directories: ReadonlyArray<string>
}

export interface Observation {
  /** The JSON text of every response, without echoes of the URI the request itself named. */
  readonly texts: Array<string>
  readonly listed: ReadonlySet<string>
  readonly resourcesList: ReadonlySet<string>
  /** Per probe: which of get / each read / each directory read succeeded. */
  readonly answered: ReadonlyMap<string, { get: boolean; reads: Array<boolean>; directories: Array<boolean> }>
}

export const observe = (client: Client, probes: ReadonlyArray<Probe>) =>
  Effect.gen(function*() {
    const texts: Array<string> = []
    const send = (method: string, params: Record<string, unknown>) =>
      Effect.map(client.send(method, params), (response) => {
        const text = JSON.stringify(response.body)
        texts.push(typeof params.uri === "string" ? text.split(params.uri).join("<requested>") : text)
        if (response.body?.error !== undefined && response.body.error.code !== -32602) {
          throw new Error(`${method} ${JSON.stringify(params)}: unexpected ${JSON.stringify(response.body)}`)
        }
        return response.body?.result as any
      })
    const listed = new Set<string>()
    let cursor: string | undefined
    let pages = 0
    do {
      const result = yield* send("skills/list", cursor === undefined ? {} : { cursor })
      for (const skill of result.skills) listed.add(skill.uri)
      cursor = result.nextCursor
      if (++pages > 1000) throw new Error("skills/list does not end")
    } while (cursor !== undefined)
    const resourcesList = new Set<string>(
      (yield* send("resources/list", {})).resources.map((resource: any) => resource.uri)
    )
    const answered = new Map<string, { get: boolean; reads: Array<boolean>; directories: Array<boolean> }>()
    for (const probe of probes) {
      const get = (yield* send("skills/get", { uri: probe.uri })) !== undefined
      const reads: Array<boolean> = []
      for (const uri of probe.files) reads.push((yield* send("resources/read", { uri })) !== undefined)
      const directories: Array<boolean> = []
      for (const uri of probe.directories) {
        directories.push((yield* send("resources/directory/read", { uri })) !== undefined)
      }
      answered.set(probe.uri, { get, reads, directories })
    }
    return { texts, listed, resourcesList, answered } satisfies Observation
  })
