import { type Type as ClassType } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

/** Every list answers `{items, total}` (docs/specification.md, "Lists"). */
export interface Page<T> {
  items: T[];
  total: number;
}

/** Which page of a list is asked for. */
export interface PageWindow {
  page: number;
  pageSize: number;
}

export interface PageSizes {
  /** The page size when the query names none. */
  pageSize: number;
  /** The largest page size a query may ask for. */
  maxPageSize: number;
}

/** The `?page=&pageSize=` query of a list, with that list's page sizes. */
export function PageQueryOf(sizes: PageSizes): ClassType<PageWindow> {
  class PageQuery implements PageWindow {
    @ApiPropertyOptional({ minimum: 1, default: 1 })
    @IsOptional()
    @Type(() => Number)
    @IsInt()
    @Min(1)
    @Max(1_000_000)
    page: number = 1;

    @ApiPropertyOptional({ minimum: 1, maximum: sizes.maxPageSize, default: sizes.pageSize })
    @IsOptional()
    @Type(() => Number)
    @IsInt()
    @Min(1)
    @Max(sizes.maxPageSize)
    pageSize: number = sizes.pageSize;
  }
  return PageQuery;
}

export function skipTake(query: PageWindow): { skip: number; take: number } {
  return { skip: (query.page - 1) * query.pageSize, take: query.pageSize };
}

/** A whole list as one page: for lists an administrator curates, which stay short. */
export function wholeList<T>(items: T[]): Page<T> {
  return { items, total: items.length };
}

/** The OpenAPI shape of `{items, total}` for one item class. */
export function PageOf<T>(item: ClassType<T>): ClassType<Page<T>> {
  class PageOfItems implements Page<T> {
    @ApiProperty({ type: [item] })
    items!: T[];

    @ApiProperty({ description: 'Items matching the filters, over all pages' })
    total!: number;
  }
  Object.defineProperty(PageOfItems, 'name', { value: `${item.name}Page` });
  return PageOfItems;
}
