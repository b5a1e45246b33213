/**
 * Schemas whose valid values are generated rather than filtered.
 *
 * effect derives a generator field by field and then drops every value a check refuses. A check
 * that spans fields (a frontmatter `name` equal to the last segment of the `uri`, an entry listing
 * its own `SKILL.md`) is almost never met that way, so `Arbitrary.schema` and `it.prop` exhaust.
 * A declaration is the one place effect lets a schema name its own generator (`toCodecArbitrary`),
 * so the schema is wrapped in one that decodes and encodes exactly as the schema does.
 */
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as SchemaGetter from "effect/SchemaGetter"
import * as SchemaParser from "effect/SchemaParser"
import * as SchemaTransformation from "effect/SchemaTransformation"

/** @internal */
export const withGenerator = <S extends Schema.Codec<unknown, unknown>, Source extends Schema.Constraint>(
  schema: S,
  source: Source,
  make: (source: Source["Type"]) => S["Type"]
) =>
  Schema.declareConstructor<S["Type"], S["Encoded"]>()(
    [schema],
    // The type parameter arrives as the codec for the direction being run (decoding, encoding, or
    // validating the type side), so one parse serves all three with the schema's own checks.
    ([codec]) => {
      const parse = SchemaParser.decodeUnknownEffect(codec)
      return (input, _ast, options) => parse(input, options)
    },
    {
      toCodecArbitrary: () =>
        Schema.link<S["Type"]>()(source, { decode: SchemaGetter.transform(make), encode: SchemaGetter.forbiddenEncoding }),
      toCodec: ([codec]) => new SchemaAST.Link(codec.ast, SchemaTransformation.passthrough()),
      toEquivalence: ([equivalence]) => equivalence,
      toFormatter: ([formatter]) => formatter
    }
  )

// Generator sources only, never used to validate: decoded URI path segments and relative file paths
// with spaces and non-ASCII letters, so that percent-encoding is exercised.
const segmentSource = "[a-z0-9][a-z0-9 ._~é-]{0,11}"

/** @internal */
export const Segment = Schema.String.check(Schema.isPattern(new RegExp(`^${segmentSource}$`)))

/** @internal */
export const FilePath = Schema.String.check(Schema.isPattern(new RegExp(`^(?:${segmentSource}/){0,2}${segmentSource}$`)))
