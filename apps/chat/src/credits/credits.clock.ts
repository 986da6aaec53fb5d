import { Injectable } from '@nestjs/common';

/**
 * The time the credits schedulers and plan assignments go by. Their work methods take the
 * time as a parameter, read from here in the app, so the specs run them at any moment they
 * choose (a period boundary, a month later) without waiting.
 */
@Injectable()
export class CreditsClock {
  now(): Date {
    return new Date();
  }
}
