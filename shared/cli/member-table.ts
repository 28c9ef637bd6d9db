import type { GroupList, MemberList } from "../sdk/index.js";

/** A group's members as a table for people: one row per member, its age in seconds. */
export function memberTable(list: MemberList): string {
  if (list.members.length === 0) return `group ${list.group}: no members\n`;
  const rows = list.members.map((view) => [view.member, view.state, `${(view.ageMs / 1000).toFixed(1)}s`, view.session, view.address ?? "-"]);
  return table(["MEMBER", "STATE", "AGE", "SESSION", "ADDRESS"], rows);
}

/** Every group with its members counted by state. */
export function groupTable(list: GroupList): string {
  if (list.groups.length === 0) return "no groups\n";
  const rows = list.groups.map(({ group, members }) => [group, String(members.joining), String(members.active), String(members.unreachable), String(members.leaving)]);
  return table(["GROUP", "JOINING", "ACTIVE", "UNREACHABLE", "LEAVING"], rows);
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)));
  const line = (cells: string[]): string => cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join("  ").trimEnd();
  return `${[header, ...rows].map(line).join("\n")}\n`;
}
