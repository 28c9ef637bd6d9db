/**
 * Reads Bicep templates through the tree-sitter-bicep grammar, so that the infrastructure
 * checks ask questions of declarations and property values rather than of text.
 */
import { readFileSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { Language, Parser, type Node } from "web-tree-sitter";

export type { Node };

export interface BicepFile {
  /** Path relative to the repository root, with forward slashes. */
  readonly path: string;
  readonly root: Node;
}

export interface SyntaxProblem {
  readonly path: string;
  readonly line: number;
  readonly column: number;
  readonly kind: "error" | "missing";
  readonly text: string;
}

/** One `resource` declaration, nested ones included, with its full type. */
export interface BicepResource {
  readonly file: BicepFile;
  readonly symbol: string;
  /** e.g. `Microsoft.Storage/storageAccounts/tableServices/tables` */
  readonly type: string;
  readonly apiVersion: string;
  readonly existing: boolean;
  /** The `{ … }` body (the branch of an `if (…)` when the resource is conditional). */
  readonly body: Node;
  /** The condition of `resource x '…' = if (cond) { … }`. */
  readonly condition: Node | undefined;
}

export interface BicepDeclaration {
  readonly file: BicepFile;
  readonly name: string;
  readonly node: Node;
  /** The function names of the decorators above it: `description`, `secure`, … */
  readonly decorators: readonly string[];
  /** The value: a parameter's default, a variable's or an output's expression. */
  readonly value: Node | undefined;
}

const require = createRequire(import.meta.url);
const REPO_ROOT = path.resolve(import.meta.dirname, "..", "..");
let parserPromise: Promise<Parser> | undefined;

function getParser(): Promise<Parser> {
  parserPromise ??= (async () => {
    await Parser.init();
    const language = await Language.load(require.resolve("tree-sitter-bicep/tree-sitter-bicep.wasm"));
    return new Parser().setLanguage(language);
  })();
  return parserPromise;
}

export async function parseBicep(source: string, filePath = "<inline>.bicep"): Promise<BicepFile> {
  const tree = (await getParser()).parse(source);
  if (tree === null) throw new Error(`tree-sitter returned no tree for ${filePath}`);
  return { path: filePath, root: tree.rootNode };
}

export async function parseBicepFile(absolutePath: string): Promise<BicepFile> {
  const relative = path.relative(REPO_ROOT, absolutePath).split(path.sep).join("/");
  return parseBicep(readFileSync(absolutePath, "utf8"), relative);
}

/** Every `.bicep` file under `dir`, sorted, as absolute paths. */
export function listBicepFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".bicep"))
    .map((entry) => path.join(entry.parentPath, entry.name))
    .sort();
}

export function repoPath(...segments: string[]): string {
  return path.join(REPO_ROOT, ...segments);
}

/** ERROR and MISSING nodes: what tree-sitter inserted to recover from invalid syntax. */
export function syntaxProblems(file: BicepFile): SyntaxProblem[] {
  const problems: SyntaxProblem[] = [];
  const visit = (node: Node): void => {
    if (node.isError || node.isMissing) {
      problems.push({
        path: file.path,
        line: node.startPosition.row + 1,
        column: node.startPosition.column + 1,
        kind: node.isMissing ? "missing" : "error",
        text: node.text.slice(0, 60),
      });
    }
    if (node.hasError) for (const child of node.children) visit(child);
  };
  visit(file.root);
  return problems;
}

/** The top-level statements of a file's given type (`parameter_declaration`, …). */
function statements(file: BicepFile, type: string): Node[] {
  return file.root.namedChildren.filter((node) => node.type === type);
}

function nameOf(declaration: Node): string {
  const name = declaration.namedChildren.find((child) => child.type === "identifier");
  if (name === undefined) throw new Error(`${declaration.type} without a name at ${declaration.startPosition.row + 1}`);
  return name.text;
}

/** Decorators are a `decorators` sibling right before the declaration they apply to. */
function decoratorsOf(declaration: Node): string[] {
  const previous = declaration.previousNamedSibling;
  if (previous?.type !== "decorators") return [];
  return previous.namedChildren
    .map((decorator) => decorator.namedChildren[0])
    .map((expression) => {
      if (expression === undefined) return "";
      // `@sys.description(…)` is a call on a member expression; keep the member name.
      const callee = expression.type === "call_expression" ? expression.childForFieldName("function") : expression;
      return callee?.type === "member_expression" ? (callee.childForFieldName("property")?.text ?? "") : (callee?.text ?? "");
    });
}

function declarations(file: BicepFile, type: string, valueIndex: number): BicepDeclaration[] {
  return statements(file, type).map((node) => ({
    file,
    name: nameOf(node),
    node,
    decorators: decoratorsOf(node),
    value: node.namedChildren[valueIndex] ?? undefined,
  }));
}

/** `param name type = default`: value is the default, if any. */
export function parameters(file: BicepFile): BicepDeclaration[] {
  return declarations(file, "parameter_declaration", 2);
}

/** `var name = value` */
export function variables(file: BicepFile): BicepDeclaration[] {
  return declarations(file, "variable_declaration", 1);
}

/** `output name type = value` */
export function outputs(file: BicepFile): BicepDeclaration[] {
  return declarations(file, "output_declaration", 2);
}

/** Every resource in the file, including nested child resources (`resource x 'containers' = …`). */
export function resources(file: BicepFile): BicepResource[] {
  const found: BicepResource[] = [];
  const collect = (declaration: Node, parentType: string | undefined): void => {
    const typeString = stringValue(declaration.namedChildren.find((child) => child.type === "string") ?? null);
    if (typeString === undefined) throw new Error(`resource type is not a plain string at ${file.path}:${declaration.startPosition.row + 1}`);
    const [relativeType = "", apiVersion = ""] = typeString.split("@");
    const type = parentType === undefined ? relativeType : `${parentType}/${relativeType}`;
    const conditional = declaration.namedChildren.find((child) => child.type === "if_statement");
    const body = (conditional ?? declaration).namedChildren.find((child) => child.type === "object");
    if (body === undefined) throw new Error(`resource ${nameOf(declaration)} has no object body at ${file.path}`);
    found.push({
      file,
      symbol: nameOf(declaration),
      type,
      apiVersion,
      existing: declaration.children.some((child) => child.type === "existing"),
      body,
      condition: conditional?.namedChildren.find((child) => child.type === "parenthesized_expression"),
    });
    // A nested resource sits in the body as an object_property holding its declaration.
    for (const child of body.namedChildren) {
      const nested = child.type === "object_property" ? child.namedChildren[0] : child;
      if (nested?.type === "resource_declaration") collect(nested, type);
    }
  };
  for (const declaration of statements(file, "resource_declaration")) collect(declaration, undefined);
  return found;
}

/** Resources of one type (case-insensitive, as ARM treats types), `existing` references left out. */
export function resourcesOfType(files: readonly BicepFile[], type: string): BicepResource[] {
  return files
    .flatMap(resources)
    .filter((resource) => !resource.existing && resource.type.toLowerCase() === type.toLowerCase());
}

/** The `module x '<path>' = …` declarations of a file, with their bodies. */
export function modules(file: BicepFile): { symbol: string; source: string; body: Node; condition: Node | undefined }[] {
  return statements(file, "module_declaration").map((declaration) => {
    // `module m '…' = [for (x, i) in xs: { … }]`: one deployment per element, one body.
    const loop = declaration.namedChildren.find((child) => child.type === "for_statement");
    const conditional = (loop ?? declaration).namedChildren.find((child) => child.type === "if_statement");
    const body = (conditional ?? loop ?? declaration).namedChildren.find((child) => child.type === "object");
    if (body === undefined) throw new Error(`module ${nameOf(declaration)} has no object body at ${file.path}`);
    return {
      symbol: nameOf(declaration),
      source: stringValue(declaration.namedChildren.find((child) => child.type === "string") ?? null) ?? "",
      body,
      condition: conditional?.namedChildren.find((child) => child.type === "parenthesized_expression"),
    };
  });
}

/** The key of an `object_property`: an identifier, or a plain string key like `'a-b'`. */
function propertyKey(property: Node): string | undefined {
  const key = property.namedChildren[0];
  if (key === undefined) return undefined;
  if (key.type === "identifier") return key.text;
  return stringValue(key);
}

/** The object's properties as [key, value node] pairs, in source order (comments skipped). */
export function objectEntries(object: Node): [string, Node][] {
  if (object.type !== "object") return [];
  const entries: [string, Node][] = [];
  for (const property of object.namedChildren) {
    if (property.type !== "object_property") continue;
    const key = propertyKey(property);
    const value = property.namedChildren[1];
    if (key !== undefined && value !== undefined) entries.push([key, value]);
  }
  return entries;
}

/** Follows `keys` down nested objects: property(body, 'properties', 'siteConfig', 'minTlsVersion'). */
export function property(object: Node | undefined, ...keys: string[]): Node | undefined {
  let current = object;
  for (const key of keys) {
    if (current === undefined) return undefined;
    current = objectEntries(current).find(([name]) => name === key)?.[1];
  }
  return current;
}

/** The value of a string literal without interpolation; undefined for anything else. */
export function stringValue(node: Node | null | undefined): string | undefined {
  if (node?.type !== "string") return undefined;
  let value = "";
  // Children are the quotes, string_content, interpolations and escape sequences (some of
  // them anonymous tokens), in source order.
  for (const part of node.children) {
    if (part.type === "'" || part.type === "'''") continue;
    if (part.type === "interpolation") return undefined;
    value += part.type === "string_content" ? part.text : unescape(part.text);
  }
  return value;
}

function unescape(sequence: string): string {
  const simple: Record<string, string> = { "\\'": "'", "\\\\": "\\", "\\n": "\n", "\\r": "\r", "\\t": "\t", "\\$": "$" };
  return simple[sequence] ?? sequence;
}

/** A literal's value (string, number, boolean or null); undefined for an expression. */
export function literalValue(node: Node | null | undefined): string | number | boolean | null | undefined {
  if (node === null || node === undefined) return undefined;
  switch (node.type) {
    case "string":
      return stringValue(node);
    case "number":
      return Number(node.text);
    case "boolean":
      return node.text === "true";
    case "null":
      return null;
    case "unary_expression":
      return node.text.startsWith("-") && node.namedChildren[0]?.type === "number" ? -Number(node.namedChildren[0].text) : undefined;
    default:
      return undefined;
  }
}

/** When `node` names a `var` of the file, that variable's value; otherwise `node` itself. */
export function resolveVariable(file: BicepFile, node: Node | undefined): Node | undefined {
  if (node?.type !== "identifier") return node;
  const variable = variables(file).find((candidate) => candidate.name === node.text);
  return variable === undefined ? node : resolveVariable(file, variable.value);
}

/** A call's function name and argument nodes, or undefined when `node` is not a call. */
export function call(node: Node | undefined): { name: string; args: Node[] } | undefined {
  if (node?.type !== "call_expression") return undefined;
  const callee = node.childForFieldName("function");
  const args = node.childForFieldName("arguments")?.namedChildren ?? [];
  const name = callee?.type === "member_expression" ? (callee.childForFieldName("property")?.text ?? "") : (callee?.text ?? "");
  return { name, args: args.filter((arg) => arg.type !== "comment") };
}

/** Every node of the given types under `node` (itself included). */
export function descendants(node: Node, types: readonly string[]): Node[] {
  return node.descendantsOfType([...types]).filter((found): found is Node => found !== null);
}

/** The tokens an expression is made of: identifiers, property names and string contents. */
export function expressionWords(node: Node): string[] {
  return descendants(node, ["identifier", "property_identifier", "string_content"]).map((word) => word.text);
}

/**
 * The objects an expression can evaluate to, as key → value-node maps, for expressions made
 * of object literals, variables, `union(…)` and `cond ? a : b` (one map per branch
 * combination). Anything else throws: a check must not silently skip what it cannot read.
 */
export function objectVariants(file: BicepFile, expression: Node | undefined): Map<string, Node>[] {
  const node = resolveVariable(file, expression);
  if (node === undefined) throw new Error(`no expression to read in ${file.path}`);
  if (node.type === "object") return [new Map(objectEntries(node))];
  if (node.type === "parenthesized_expression") return objectVariants(file, node.namedChildren[0]);
  if (node.type === "ternary_expression") {
    return [
      ...objectVariants(file, node.childForFieldName("consequence") ?? undefined),
      ...objectVariants(file, node.childForFieldName("alternative") ?? undefined),
    ];
  }
  const union = call(node);
  if (union?.name === "union") {
    let combined: Map<string, Node>[] = [new Map()];
    for (const arg of union.args) {
      const options = objectVariants(file, arg);
      combined = combined.flatMap((left) => options.map((right) => new Map([...left, ...right])));
    }
    return combined;
  }
  throw new Error(`cannot read an object from \`${node.text.slice(0, 60)}\` at ${file.path}:${node.startPosition.row + 1}`);
}

/**
 * A string expression with every `${var}` whose variable is a plain string filled in; other
 * interpolations stay as `${expression}`. Undefined when `node` is not a string.
 */
export function renderString(file: BicepFile, node: Node | undefined): string | undefined {
  const resolved = resolveVariable(file, node);
  if (resolved?.type !== "string") return undefined;
  let rendered = "";
  for (const part of resolved.children) {
    if (part.type === "'" || part.type === "'''") continue;
    if (part.type === "interpolation") {
      const inner = part.namedChildren[0];
      rendered += stringValue(resolveVariable(file, inner ?? undefined)) ?? `\${${inner?.text ?? ""}}`;
    } else {
      rendered += part.type === "string_content" ? part.text : unescape(part.text);
    }
  }
  return rendered;
}
