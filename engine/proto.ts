import { join } from 'node:path';

import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

import { packagePath } from './package-files.js';

/**
 * Loads the `.proto` files of `proto/` for both sides of a gRPC connection: the simulator's
 * servers and the engine's clients load the same definitions the same way.
 *
 * The proto/ directory is the package's (package-files.ts), from source and compiled alike.
 */

/**
 * Field names as written in the .proto (`ttl_ms`, not `ttlMs`), u64 as decimal strings (slots
 * above 2^53 stay exact), defaults filled in. Callers may override per load.
 */
export const PROTO_LOADER_OPTIONS: Readonly<protoLoader.Options> = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

const PROTO_MARKER = 'shredstream.proto';

/** Absolute path of the package's proto/ directory. */
export function protoDir(): string {
  return packagePath('proto');
}

/** The `shredstream` package: both services, as grpc-js client constructors (each has `.service`). */
export interface ShredstreamProto {
  readonly packageDefinition: protoLoader.PackageDefinition;
  /** Served by the local proxy: SubscribeEntries (server streaming Entry{slot, entries}). */
  readonly ShredstreamProxy: grpc.ServiceClientConstructor;
  /** Served by the block engine: SendHeartbeat. */
  readonly Shredstream: grpc.ServiceClientConstructor;
}

let cachedDefault: ShredstreamProto | undefined;

/**
 * Loads proto/shredstream.proto (and shared.proto) with PROTO_LOADER_OPTIONS, overridden by
 * `options`. The default load is cached; loads with overrides are not.
 */
export function loadShredstreamProto(options?: protoLoader.Options): ShredstreamProto {
  if (options === undefined && cachedDefault !== undefined) return cachedDefault;
  const dir = protoDir();
  const packageDefinition = protoLoader.loadSync(join(dir, PROTO_MARKER), {
    ...PROTO_LOADER_OPTIONS,
    ...options,
    includeDirs: [dir, ...(options?.includeDirs ?? [])],
  });
  const pkg = grpc.loadPackageDefinition(packageDefinition)['shredstream'] as grpc.GrpcObject;
  const loaded: ShredstreamProto = {
    packageDefinition,
    ShredstreamProxy: pkg['ShredstreamProxy'] as grpc.ServiceClientConstructor,
    Shredstream: pkg['Shredstream'] as grpc.ServiceClientConstructor,
  };
  if (options === undefined) cachedDefault = loaded;
  return loaded;
}

/**
 * Options for tidepool's own `tidepool.v1` API. Unlike the Jito protos (whose upstream snake_case
 * names are kept), field names are camelCase (`pairId`, `outputAmount`): the proto3 JSON mapping,
 * the engine's TypeScript types and the REST JSON (docs/architecture.md §3) all use camelCase, so a quote
 * crosses from the engine to the wire without renaming. u64 as decimal strings (`longs: String`:
 * an amount above 2^53 stays exact; serialize from decimal strings, as numbers lose units past 2^53),
 * enums as their names (`DECISION_EXECUTE`), defaults filled in, oneofs named by a virtual field.
 */
export const TIDEPOOL_PROTO_LOADER_OPTIONS: Readonly<protoLoader.Options> = {
  keepCase: false,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

/** The `tidepool.v1` files, relative to protoDir(); imports resolve from protoDir(). */
export const TIDEPOOL_PROTO_FILES: readonly string[] = [
  'tidepool/v1/quote.proto',
  'tidepool/v1/quote_service.proto',
  'tidepool/v1/aggregator.proto',
];

/** The `tidepool.v1` package: both services, as grpc-js client constructors (each has `.service`). */
export interface TidepoolProto {
  readonly packageDefinition: protoLoader.PackageDefinition;
  /**
   * Spec 01's client-facing service (:50051): StreamAggregatedQuotes, GetAggregatedQuote,
   * GetConfidenceBreakdown, Health.
   */
  readonly QuoteAggregatorService: grpc.ServiceClientConstructor;
  /** Served by both upstreams (local :50052, external :50053): StreamBatchQuotes. */
  readonly QuoteService: grpc.ServiceClientConstructor;
}

let cachedTidepool: TidepoolProto | undefined;

/**
 * Loads proto/tidepool/v1/*.proto with TIDEPOOL_PROTO_LOADER_OPTIONS, overridden by `options`.
 * The default load is cached; loads with overrides are not.
 */
export function loadTidepoolProto(options?: protoLoader.Options): TidepoolProto {
  if (options === undefined && cachedTidepool !== undefined) return cachedTidepool;
  const dir = protoDir();
  const packageDefinition = protoLoader.loadSync(
    TIDEPOOL_PROTO_FILES.map((file) => join(dir, file)),
    {
      ...TIDEPOOL_PROTO_LOADER_OPTIONS,
      ...options,
      includeDirs: [dir, ...(options?.includeDirs ?? [])],
    },
  );
  const root = grpc.loadPackageDefinition(packageDefinition)['tidepool'] as grpc.GrpcObject;
  const v1 = root['v1'] as grpc.GrpcObject;
  const loaded: TidepoolProto = {
    packageDefinition,
    QuoteAggregatorService: v1['QuoteAggregatorService'] as grpc.ServiceClientConstructor,
    QuoteService: v1['QuoteService'] as grpc.ServiceClientConstructor,
  };
  if (options === undefined) cachedTidepool = loaded;
  return loaded;
}

/**
 * Options for the Yellowstone `geyser` package: upstream snake_case names kept (`write_version`,
 * `from_slot`), as for the Jito protos; u64 as decimal strings, bytes as Buffers, enums as names,
 * oneofs named by `update_oneof`.
 */
export const GEYSER_PROTO_LOADER_OPTIONS: Readonly<protoLoader.Options> = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

/** The `geyser` package (proto/geyser.proto, a subset of Yellowstone's): service Geyser. */
export interface GeyserProto {
  readonly packageDefinition: protoLoader.PackageDefinition;
  /** Subscribe (bidirectional stream SubscribeRequest → SubscribeUpdate) and Ping. */
  readonly Geyser: grpc.ServiceClientConstructor;
}

let cachedGeyser: GeyserProto | undefined;

/** Loads proto/geyser.proto with GEYSER_PROTO_LOADER_OPTIONS; the default load is cached. */
export function loadGeyserProto(options?: protoLoader.Options): GeyserProto {
  if (options === undefined && cachedGeyser !== undefined) return cachedGeyser;
  const dir = protoDir();
  const packageDefinition = protoLoader.loadSync(join(dir, 'geyser.proto'), {
    ...GEYSER_PROTO_LOADER_OPTIONS,
    ...options,
    includeDirs: [dir, ...(options?.includeDirs ?? [])],
  });
  const pkg = grpc.loadPackageDefinition(packageDefinition)['geyser'] as grpc.GrpcObject;
  const loaded: GeyserProto = { packageDefinition, Geyser: pkg['Geyser'] as grpc.ServiceClientConstructor };
  if (options === undefined) cachedGeyser = loaded;
  return loaded;
}
