import { type Type as ClassType } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { type Page, type PageSizes, type PageWindow } from './pagination.js';

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
