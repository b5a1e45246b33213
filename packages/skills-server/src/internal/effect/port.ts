/**
 * The port: the one door from the rest of the server into `internal/effect/`, the only folder that
 * touches effect's undocumented MCP, RPC and HTTP internals or patches an effect service. When an
 * effect upgrade breaks something, it breaks in this folder; each hook below names what it uses,
 * and `hooks.ts` checks the hooks are there when the layer is built and when the server starts.
 *
 * The hooks, by what they do:
 *
 * - `wrapAdapter` (`adapter.ts`, `connections.ts`, `listenPacing.ts`): the extension's methods,
 *   capability and interceptors on an adapter, through `installHandlers` (typed `any`),
 *   `target.install`, `target.context`, `lifecycle`, `handlerRpcs`, `projectNotification`; listen
 *   streams paced under effect's 64 pending notifications; stdio connections told of changes.
 * - `toolRequest` (`adapter.ts`): the request of a `tools/call`, carried from effect's handler of
 *   it into the skills tools' handlers, so a tool call is decided as every skills request is.
 * - `verify` (`hooks.ts`): the layer's check of those hooks.
 * - `attach` / `attached`, `endHttpSession`, `guardRegistrations` (`server.ts`): state kept on the
 *   `McpServer` service, an HTTP session ended in effect's own records (its MCP runtime service),
 *   and `addResource` patched so a later resource cannot take a skill's URI.
 * - `endpointOf` (`server.ts`): the route middleware provided around the endpoint, read from
 *   `HttpRouter`'s context keys.
 * - `otherAnswerer` (`server.ts`): whether an adapter other than effect's own already answers the
 *   extension's methods: one answerer per server.
 * - `RequestInfo.native`, `holdsNative` (`native.ts`, `server.ts`): the skills registered through
 *   effect's own `McpServer.skill` (4.1.1 and later), read per request through effect's skills
 *   core, so the layer answers for both; whether there are any, for the fast route.
 * - `registerVisibility`, `mcpMiddleware` (`visibility.ts`, `hooks.ts`): the visibility check
 *   inside effect's MCP middleware, and each skill decided by the `McpServer` middleware provided
 *   to the layer, read from its context.
 *   It still needs a hidden resource: effect 4.1.0 runs middleware only around its own
 *   registrations, and offers no call that runs an effect inside them (see that module).
 * - `learn`, `withDecision`, `reportBodyLimit`, `markAdmission` (`learning.ts`): what the fast
 *   route learns of an endpoint from a request on effect's route, through slots in the request's
 *   fiber context, and the decision it hands back to effect's path.
 * - `readBody`, `requestHeaders` (`request.ts`): the body of a request the fast route admits, read
 *   from the Node stream of `@effect/platform-node`'s request and put in that request's own body
 *   cache (`arrayBufferEffect`), where it exists and is empty; effect's `arrayBuffer` elsewhere.
 *   A request's headers as Node parsed them (its `source`), while effect has no copy or override
 *   (`headersOverride`); effect's `headers` elsewhere.
 *
 * Nothing else in the server names an internal of effect: the structure test checks it.
 *
 * @internal
 */
export type {
  Connection,
  NativeChild,
  NativeEntry,
  NativeSkills,
  EffectRequest,
  Extension,
  Handler,
  Interceptor,
  Listener,
  Method,
  Notice,
  RequestInfo,
  WireError
} from "./shapes.js"
export { isWireError } from "./shapes.js"
export { methods, toolRequest, wrapAdapter } from "./adapter.js"
export { mcpMiddleware, verify } from "./hooks.js"
export { attach, attached, endHttpSession, endpointOf, guardRegistrations, holdsNative, otherAnswerer } from "./server.js"
export type { Answerer, Endpoint } from "./server.js"
export { register as registerVisibility } from "./visibility.js"
export type { Bridge, Check, Verdict } from "./visibility.js"
export { learn, markAdmission, reportBodyLimit, withDecision } from "./learning.js"
export { headers as requestHeaders, read as readBody } from "./request.js"
export type { Learnt, Seen } from "./learning.js"
