import { PageQueryOf } from '@switchyard/service/openapi';

/** `?page=&pageSize=` of every admin list. */
export class PageQuery extends PageQueryOf({ pageSize: 20, maxPageSize: 100 }) {}
