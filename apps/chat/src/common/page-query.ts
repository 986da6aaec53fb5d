import { PageQueryOf } from '@switchyard/service/openapi';

/** `?page=&pageSize=` of the lists that grow with use: conversations and their messages. */
export class PageQuery extends PageQueryOf({ pageSize: 50, maxPageSize: 200 }) {}
