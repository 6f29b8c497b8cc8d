import fastJson, { type Schema } from 'fast-json-stringify';
import type { FastifySerializerCompiler } from 'fastify/types/schema.js';

type Serializer = (data: unknown) => string;

/**
 * Each distinct response schema is compiled once per process: the error body stands under every
 * route's 4xx, and the apps one process builds (a test file builds dozens) share every schema.
 * Fastify's own compiler builds fast-json-stringify afresh for each route and status, which made
 * most of an app's start. Same compiler, same options (`schemas`: those added with addSchema, each with its $id).
 */
const serializers = new Map<string, Serializer>();

export function serializerCompiler(schemas: readonly object[]): FastifySerializerCompiler<unknown> {
  const shared: Record<string, Schema> = Object.fromEntries(schemas.map((schema) => [String((schema as { $id?: unknown }).$id), schema as Schema]));
  const sharedKey = JSON.stringify(shared);
  return ({ schema }) => {
    const key = `${sharedKey}\n${JSON.stringify(schema)}`;
    let serialize = serializers.get(key);
    if (!serialize) {
      // As Fastify's compiler: a shared schema is not given again as an external one of itself.
      const { $id } = schema as { $id?: string };
      const external = $id !== undefined && $id in shared ? Object.fromEntries(Object.entries(shared).filter(([id]) => id !== $id)) : shared;
      serializers.set(key, (serialize = fastJson(schema as Schema, { schema: external }) as Serializer));
    }
    return serialize;
  };
}
