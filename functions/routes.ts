import type { RouteDefinition } from "../shared/http/route.js";
import { healthRoutes } from "./health.js";
import { primaryRoutes } from "./primary.js";

/** The REST contract (SPEC §4): the one route table both hosts serve. */
export const routes: readonly RouteDefinition[] = [...primaryRoutes, ...healthRoutes];
