/**
 * engine/messages: the platform messages that cross the bus between services (spec 03), in one
 * home that producers and consumers both import: MarketEvent and PriceUpdate (market scanner →
 * planners), TradeOpportunity (planners → executors), ExecutionRequest and ExecutionResult
 * (executors → whoever follows orders), TradeSignal (signal sources → the signal planner),
 * SystemMetrics (every service → whoever keeps history), each with its subject, JSON codec and
 * schema check.
 */
export * from './market-event.js';
export * from './trade-opportunity.js';
export * from './execution-messages.js';
export * from './trade-signal.js';
export * from './system-metrics.js';
export { assertSchema, invalidMessage, messageSchemaPath, parseMessageJson, schemaViolationsOf } from './message-schema.js';
