import { Module } from '@nestjs/common';
import { ChangeEvents } from './change-events.js';

@Module({ providers: [ChangeEvents], exports: [ChangeEvents] })
export class EventsModule {}
