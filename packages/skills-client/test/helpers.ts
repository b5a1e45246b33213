import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import { SkillCache, SkillsClient } from "@mcp-skills/client"

export const versions: ReadonlyArray<SkillsClient.ProtocolVersion> = ["2026-07-28", "2025-11-25"]

/** Runs `f` with a client connected to `url` over HTTP. */
export const withClient = <A, E>(
  url: string,
  f: (client: SkillsClient.Service) => Effect.Effect<A, E>,
  options: Omit<Parameters<typeof SkillsClient.layerHttp>[0], "url"> & {
    readonly cache?: Layer.Layer<never>
  } = {}
) =>
  SkillsClient.SkillsClient.use(f).pipe(
    Effect.provide(
      SkillsClient.layerHttp({ url, ...options }).pipe(
        Layer.provide([FetchHttpClient.layer, options.cache ?? SkillCache.layerMemory()])
      )
    )
  )
