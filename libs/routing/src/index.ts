export {
  RoutingTable,
  weightedOrder,
  type Candidate,
  type CandidateQuery,
} from './routing-table.js';
