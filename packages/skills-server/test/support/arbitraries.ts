/**
 * Arbitraries the server's property and fuzz tests share.
 */
import * as Arbitrary from "effect/Arbitrary"
import * as Schema from "effect/Schema"

/** One of several arbitraries, picked uniformly. */
export const oneOf = <A>(...arbitraries: ReadonlyArray<Arbitrary.Arbitrary<A>>): Arbitrary.Arbitrary<A> =>
  Arbitrary.flatMap(
    Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: arbitraries.length - 1 }))),
    (i) => arbitraries[i]!
  )

/** One of several values. */
export const constants = <A>(values: ReadonlyArray<A>) => oneOf(...values.map((v) => Arbitrary.Constant(v)))
