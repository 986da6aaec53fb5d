import { Global, Module } from '@nestjs/common';
import { ChatMetrics } from './chat-metrics.js';

/**
 * The chat app's own metrics, for the server only: the command line shares `CoreModule` but
 * has no metrics registry to register them in.
 */
@Global()
@Module({ providers: [ChatMetrics], exports: [ChatMetrics] })
export class ChatMetricsModule {}
