import fastJson from 'fast-json-stringify';
import type { Static, TSchema } from 'typebox';
import type { Checker } from '../domain/checks/index.js';
import type { IpLookupDeps } from '../domain/ip/index.js';
import type { DnsLookupService } from '../domain/dns/index.js';
import { RESULT_IS_ITEMS, type ItemSet, type JobOperation } from '../domain/jobs/operations.js';
import type { PortScanner } from '../domain/ports/index.js';
import type { TcpPinger } from '../domain/ping/index.js';
import type { PathTools } from '../domain/path/index.js';
import type { ProxyChecker } from '../domain/proxy/index.js';
import type { RdapService, RegistrationLookup } from '../domain/rdap/index.js';
import type { Dialer, ResolveOptions } from '../domain/dialer.js';
import { AppError, ResolveError } from '../errors.js';
import type { Metrics } from '../domain/metrics.js';
import { toolNameOf } from './names.js';
import type { OperationExamples } from './shared/examples.js';
import type { ResultView } from './shared/view.js';

/**
 * One POST endpoint as a declaration, in a folder of its own (src/operations/<tool>/): its
 * schemas, what it runs, its examples and its dashboard view. The route is generated from it
 * (src/http/operation.ts), and so is the job that runs it (Prefer: respond-async): both call the
 * same `run`, so a job's `result` is the synchronous call's `data` by construction.
 */

/** What operations run with: the probes, each built once (src/compose.ts). */
export interface OperationDeps {
  /** The one dialer every outbound probe uses (target policy, timeouts, socket budget). */
  dialer: Dialer;
  dns: DnsLookupService;
  /** A domain's registration: RDAP, port-43 WHOIS for TLDs without RDAP. */
  whois: RegistrationLookup;
  /** RDAP for IP networks and AS numbers (and the domains' RDAP part). */
  rdap: RdapService;
  /** One per server: its socket budget is shared by every scan. */
  ports: PortScanner;
  /** TCP ping: connects spaced like ping's echoes, through the dialer. */
  ping: TcpPinger;
  /** Proxy checks and the judge they are judged by (one per server: the judge's nonces live in it). */
  proxy: ProxyChecker;
  /** IP lookup's collaborators: the GeoIP reader, the DNS client and the DNSBL zones. */
  ip: IpLookupDeps;
  /** Told of every run (netdiag_probes_total); NO_METRICS when /metrics is off. */
  metrics: Metrics;
  /** The HTTP and TLS checks (their trust store: Node's roots and NETDIAG_EXTRA_CA_CERTS). */
  checks: Checker;
  /** ICMP ping, traceroute and mtr: the system's programs, one process budget per server (docs/path-tools.md). */
  path: PathTools;
}

export interface RunContext {
  /** Aborted when the client goes away (synchronous) or the job is cancelled: sockets close at once. */
  signal: AbortSignal;
  /**
   * Bulk and range calls tell each item as it completes, with its place in `data`. A run given
   * it may answer `data: ITEMS_REPORTED` instead of building the array of what it reported.
   */
  onItem?: ((index: number, item: unknown) => void) | undefined;
  /** The most items this run may take (the operation's `bounds`: `sync`, or `job` in a job); undefined without bounds. */
  maxItems?: number | undefined;
  /**
   * A job run again: the items its earlier runs stored. A call that can skip them does (they are
   * not probed again; their places in `data` are left empty); whatever it reports of them is
   * dropped.
   */
  done?: ItemSet | undefined;
}

/**
 * A run's `data` when it is exactly the items it told `onItem`, each once, in their places: a job
 * then keeps them as its result (RESULT_IS_ITEMS) and no array of them is ever built.
 */
export const ITEMS_REPORTED: unique symbol = Symbol('data is the items reported through onItem');

/** How many items a bulk or range call takes: `sync` in one call, `job` as a job (Prefer: respond-async). */
export interface ItemBounds {
  sync: number;
  job: number;
  /** What an item is, in the document's words: "ports". */
  noun: string;
}

/**
 * What `run` answers as `data`: a value of the `data` schema's type, so the compiler holds what the
 * domain returns to what the document says. A job run again (`ctx.done`) leaves the places of the
 * items it skipped empty; a run given `onItem` may answer ITEMS_REPORTED.
 */
export type RunData<D extends TSchema> = Static<D> | (Static<D> extends readonly (infer I)[] ? (I | undefined)[] : never) | typeof ITEMS_REPORTED;

/*
 * The functions below are methods, not function-typed properties: every declaration is then an
 * AnyOperation as it is (a method's parameters are compared both ways), with no cast. What
 * stands behind it: the route's validator has checked each body against `body` before any of
 * them is called with it, and a job's body was checked so before it was stored.
 */
export interface Operation<B extends TSchema = TSchema, D extends TSchema = TSchema> {
  /** The path under /api, which is also the job's `endpoint`. */
  path: string;
  summary: string;
  tags: string[];
  body: B;
  /** The schema of `data`; for bulk and range calls an array of the items `onItem` reports. */
  data: D;
  /**
   * The schema of each item a job streams when `data` is an object that holds them (a
   * traceroute's hops); for an array `data`, its items' schema is used.
   */
  item?: TSchema;
  /** Probes the network: counts against the account's work in flight (docs/api.md, "Rate limits"). */
  probe: boolean;
  /**
   * Bulk and range calls: the number of items `data` will hold (a job's progress total), at most
   * `max` (a ValidationError beyond it).
   */
  items?(body: Static<B>, max?: number): number;
  /**
   * Bulk and range calls whose `run` skips the items in `ctx.done` (never probes them): their
   * jobs may give their turn to other accounts' work between batches and go on later.
   */
  skipsDone?: boolean;
  /** `items` is a bound, not the count (a traceroute's hops): the finished job's progress is what it reported. */
  itemsAtMost?: boolean;
  /**
   * When a job takes more items than a synchronous call: both bounds, in this one declaration.
   * The body schema states the job's bound (it validates both); `run` and `items` are given the
   * one that applies, and the route's description in the document says both.
   */
  bounds?: ItemBounds;
  /**
   * The synchronous call's 400s and 403s, for a job before its 202: bounds the schema cannot say,
   * and every target resolved and checked through the dialer (never connected).
   */
  precheck?(deps: OperationDeps, body: Static<B>): Promise<void> | void;
  /** `data` is shaped by the `data` schema on the way out, as the serializer does (or ITEMS_REPORTED, given `onItem`). */
  run(deps: OperationDeps, body: Static<B>, ctx: RunContext): Promise<{ data: RunData<D>; message: string }>;
  /** The OpenAPI document's examples of this endpoint: request bodies, the 200, the field its 400 names. */
  examples: OperationExamples;
  /** How the dashboard shows a job's result (src/operations/shared/view.ts); without one, the generic view. */
  view?: ResultView;
}

/** "At most 1000 ports in one call; up to 65535 as a job (Prefer: respond-async)." for the document. */
export function boundsText(bounds: ItemBounds): string {
  return `At most ${bounds.sync} ${bounds.noun} in one call; up to ${bounds.job} as a job (\`Prefer: respond-async\`), its items streamed as they complete.`;
}

export type AnyOperation = Operation<TSchema, TSchema>;

/** Declares an operation: `body` and `data` type what `run`, `items` and `precheck` are given and answer. */
export function defineOperation<B extends TSchema, D extends TSchema>(op: Operation<B, D>): Operation<B, D> {
  return op;
}

/**
 * Runs an operation as both its route and its job do, and tells `deps.metrics` how the run ended:
 * `ok`, `cancelled` (the client left or the job was cancelled), or the error's code.
 */
export async function runOperation(op: AnyOperation, deps: OperationDeps, body: unknown, ctx: RunContext): Promise<{ data: unknown; message: string }> {
  // The `tool` label: the operation's MCP tool name (`port_scan_range`).
  const tool = toolNameOf(op.path);
  try {
    const answer = await op.run(deps, body, ctx);
    deps.metrics.probe(tool, 'ok');
    return answer;
  } catch (err) {
    deps.metrics.probe(tool, ctx.signal.aborted ? 'cancelled' : err instanceof AppError ? err.code : 'internal_error');
    throw err;
  }
}

/** Resolves and checks a target as the probe would, before any packet: a name that does not resolve is the probe's 200, not an error. */
export async function checkTarget(dialer: Pick<Dialer, 'resolve'>, target: string, opts: ResolveOptions): Promise<void> {
  try {
    await dialer.resolve(target, opts);
  } catch (err) {
    if (!(err instanceof ResolveError)) throw err;
  }
}

/**
 * A schema's serializer as the synchronous answer's: Fastify writes responses with
 * fast-json-stringify compiled from the route's schema, so the same compiler gives a job the same
 * text (fields the schema does not name dropped, values coerced alike), compiled once per schema.
 */
export function serializerOf(schema: TSchema): (value: unknown) => string {
  return fastJson(schema as unknown as Parameters<typeof fastJson>[0]) as (value: unknown) => string;
}

/** What the job service runs for an endpoint: the operation, its answers written as the synchronous ones are. */
export function jobOperation(op: AnyOperation, deps: OperationDeps): JobOperation {
  const itemSchema = op.item ?? (op.data as { items?: TSchema }).items;
  let serializers: { data: (value: unknown) => string; item: ((value: unknown) => string) | undefined } | undefined;
  // Compiled on first use: a process that never runs this endpoint's jobs never compiles them.
  const serialize = () => (serializers ??= { data: serializerOf(op.data), item: itemSchema && serializerOf(itemSchema) });
  // A job takes the job's bound.
  const maxItems = op.bounds?.job;
  return {
    items: op.items ? (body) => op.items!(body, maxItems) : undefined,
    skipsDone: op.skipsDone === true,
    itemsAtMost: op.itemsAtMost === true,
    async run(body, ctx) {
      const { data: writeData, item: writeItem } = serialize();
      const report = ctx.onItem;
      if (!report || !writeItem) return writeData((await runOperation(op, deps, body, { signal: ctx.signal, maxItems })).data);
      // Each item is written once, when the job's next batch write asks for it: not as it
      // completes, in the middle of the probe's own callbacks, where it cost a 1000-port scan some
      // 8 ms of CPU more. When `data` holds exactly the items reported (the same objects, each
      // reported once), or is ITEMS_REPORTED, the result is those items, already written; else
      // `data` is written whole. Which item went where is kept weakly: nothing here holds an item
      // its run let go of (a 65535-port scan keeps none past its batch).
      // A run again: the items stored before are the result's too (an empty place of `data` is one).
      const reportedAt = new WeakMap<object, number>();
      const done = ctx.done !== undefined && ctx.done.size > 0 ? ctx.done : undefined;
      let reports = 0;
      const { data } = await runOperation(op, deps, body, {
        signal: ctx.signal,
        maxItems,
        done,
        onItem: (index, item) => {
          if (done?.has(index)) return;
          if (typeof item === 'object' && item !== null) reportedAt.set(item, index);
          reports++;
          report(index, () => writeItem(item));
        },
      });
      if (data === ITEMS_REPORTED) return RESULT_IS_ITEMS;
      const itemsOnly =
        Array.isArray(data) &&
        data.length > 0 &&
        data.length === reports + (done?.size ?? 0) &&
        // every() passes over the empty places a call that skipped the stored items left.
        data.every((item, i) => done?.has(i) === true || (typeof item === 'object' && item !== null && reportedAt.get(item) === i));
      return itemsOnly ? RESULT_IS_ITEMS : writeData(data);
    },
  };
}
