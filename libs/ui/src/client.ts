// The client kit without Preact: what an app's API module needs, so that module and its
// unit specs also run in Node (the web app's Jest specs call the API from there).

export {
  createApiClient,
  type ApiClient,
  type ApiClientOptions,
  type BearerMiddleware,
  type FetchResult,
} from './api-client.js';
export { explain, type Explanation, type Vocabulary, type Words } from './explain.js';
export {
  asProblem,
  fieldErrors,
  networkProblem,
  problem,
  problemFrom,
  type FieldProblem,
  type Problem,
} from './problem.js';
