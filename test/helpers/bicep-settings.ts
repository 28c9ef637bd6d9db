/**
 * The app settings infra/modules/function-app.bicep gives the function app (commonSettings with
 * tableSettings, cosmosSettings or postgresSettings), with example values (bicep-settings.json, which the
 * cold-start benchmark reads too): the Application Insights ingestion endpoint is one nothing
 * listens on, so nothing is exported anywhere.
 */
import settings from "./bicep-settings.json" with { type: "json" };

/** The table store variant (the template's default). */
export const BICEP_TABLE_SETTINGS: Readonly<Record<string, string>> = settings.table;

/** The Cosmos DB variant. */
export const BICEP_COSMOS_SETTINGS: Readonly<Record<string, string>> = settings.cosmos;

/** The PostgreSQL variant: Entra tokens as passwords, the app creating its tables. */
export const BICEP_POSTGRES_SETTINGS: Readonly<Record<string, string>> = settings.postgres;
