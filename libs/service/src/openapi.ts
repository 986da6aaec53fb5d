// `@switchyard/service/openapi`: what services with a documented HTTP API need from
// @nestjs/swagger. Kept out of the main entry point: the edge and the workers never load it.
export { PageOf, PageQueryOf } from './page-dto.js';
export { writeOpenApiDocument } from './openapi-document.js';
