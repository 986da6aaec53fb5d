// Jest stand-in for `content-disposition`, which @fastify/static requires at load time.
// Version 3 ships only ESM, and Jest's CommonJS loader cannot require ESM on Node 20
// (plain Node can: production loads the real package). @fastify/static uses it only for
// `reply.download()`, which the web app never calls.
'use strict';

module.exports = {
  create() {
    throw new Error('content-disposition is not available under Jest');
  },
  parse() {
    throw new Error('content-disposition is not available under Jest');
  },
};
