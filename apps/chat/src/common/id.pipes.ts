import { Injectable, type PipeTransform } from '@nestjs/common';
import { ApiError } from '@switchyard/contracts';

// Path ids that cannot name a row are answered like ids of rows that do not exist: 404.

const MAX_INT = 2 ** 31 - 1;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

@Injectable()
export class IntIdPipe implements PipeTransform<string, number> {
  transform(value: string): number {
    const id = /^\d{1,10}$/.test(value) ? Number(value) : NaN;
    if (!(id >= 1 && id <= MAX_INT)) throw new ApiError('not_found', `Nothing with id ${value}`);
    return id;
  }
}

@Injectable()
export class UuidPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!UUID.test(value)) throw new ApiError('not_found', `Nothing with id ${value}`);
    return value.toLowerCase();
  }
}
