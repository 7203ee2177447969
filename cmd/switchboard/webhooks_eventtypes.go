package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchboard-voice/switchboard/outbox/outboxapi"
)

// newEventTypesCmd is `switchboard webhooks event-types`: the account's event-type
// catalog (docs/outbox.md §1).
func newEventTypesCmd(c *cli) *cobra.Command {
	group := groupCommand("event-types", "The account's event-type catalog: types, their JSON Schemas, a strict catalog")
	group.Long = `Event-types manages the account's catalog: each type an account publishes, with a
description and a JSON Schema that every published event's data of the type must pass
(a publish that fails it is refused, naming the place). A strict catalog lets endpoints
subscribe only to its types that are not archived.`
	for _, sc := range eventTypesCommands() {
		group.AddCommand(sc.command(c))
	}
	return group
}

func eventTypesCommands() []webhooksCmd {
	var (
		page                    outboxapi.Page
		archived, restore       bool
		description, schemaFlag string
	)
	schemaOf := func() (json.RawMessage, error) {
		if schemaFlag == "" {
			return nil, nil
		}
		raw := []byte(schemaFlag)
		if path, ok := strings.CutPrefix(schemaFlag, "@"); ok {
			var err error
			if raw, err = os.ReadFile(path); err != nil {
				return nil, usageError("--schema %s: %v", schemaFlag, err)
			}
		}
		if !json.Valid(raw) {
			return nil, usageError("--schema: not JSON")
		}
		return raw, nil
	}
	schemaFlags := func(cmd *cobra.Command) {
		cmd.Flags().StringVar(&description, "description", "", "what the type means")
		cmd.Flags().StringVar(&schemaFlag, "schema", "", `its JSON Schema, as JSON or @FILE (e.g. '{"type":"object","required":["amount"]}')`)
	}
	printType := func(w *webhooksRun) func(outboxapi.WebhookEventType) error {
		return func(t outboxapi.WebhookEventType) error {
			state := "active"
			if t.Archived {
				state = "archived " + stamp(t.ArchivedAt)
			}
			fmt.Fprintf(w.c.stdout, "%s  %s  schema %s\n%s\n", t.Name, state, filterText(t.JSONSchema), t.Description)
			return nil
		}
	}
	return []webhooksCmd{
		{use: "list", short: "List the catalog by name",
			flags: func(cmd *cobra.Command) {
				cmd.Flags().IntVar(&page.Limit, "limit", 50, "at most this many (1-500)")
				cmd.Flags().StringVar(&page.Cursor, "cursor", "", "the next page: the cursor the previous one printed")
				cmd.Flags().BoolVar(&archived, "archived", false, "list archived types too")
			},
			run: func(w *webhooksRun, _ []string) error {
				return send(w, outboxapi.ListEventTypes(page, archived), func(l outboxapi.EventTypeList) error {
					t := newTable(w.c.stdout, "NAME", "ARCHIVED", "SCHEMA", "DESCRIPTION")
					for _, et := range l.Data {
						schema := "-"
						if len(et.JSONSchema) > 0 && string(et.JSONSchema) != "null" {
							schema = "yes"
						}
						t.row(et.Name, stamp(et.ArchivedAt), schema, oneLineOf(&et.Description, 60))
					}
					return t.flush(l.NextCursor)
				})
			}},
		{use: "create NAME", short: "Add a type to the catalog, with a JSON Schema", args: 1, flags: schemaFlags,
			run: func(w *webhooksRun, args []string) error {
				schema, err := schemaOf()
				if err != nil {
					return err
				}
				return send(w, outboxapi.CreateEventType(outboxapi.CreateEventTypeRequest{Name: args[0], Description: description, JSONSchema: schema}), printType(w))
			}},
		{use: "show NAME", short: "Show a type with its schema", args: 1,
			run: func(w *webhooksRun, args []string) error {
				return send(w, outboxapi.GetEventType(args[0]), printType(w))
			}},
		{use: "update NAME", short: "Change a type's description or schema, or restore it",
			args: 1, flags: func(cmd *cobra.Command) {
				schemaFlags(cmd)
				cmd.Flags().BoolVar(&restore, "restore", false, "restore an archived type")
			},
			run: func(w *webhooksRun, args []string) error {
				schema, err := schemaOf()
				if err != nil {
					return err
				}
				var req outboxapi.UpdateEventTypeRequest
				if w.cmd.Flags().Changed("description") {
					req.Description = &description
				}
				req.JSONSchema = schema
				if restore {
					no := false
					req.Archived = &no
				}
				return send(w, outboxapi.UpdateEventType(args[0], req), printType(w))
			}},
		{use: "archive NAME", short: "Archive a type: kept for its events, closed to new subscriptions of a strict catalog", args: 1,
			run: func(w *webhooksRun, args []string) error {
				return send(w, outboxapi.ArchiveEventType(args[0]), printType(w))
			}},
		{use: "strict on|off", short: "Make the catalog strict (endpoints subscribe only to its types) or not", args: 1,
			run: func(w *webhooksRun, args []string) error {
				var strict bool
				switch args[0] {
				case "on":
					strict = true
				case "off":
				default:
					return usageError("strict %q: want on or off", args[0])
				}
				return send(w, outboxapi.SetCatalog(outboxapi.WebhookCatalog{Strict: strict}), func(c outboxapi.WebhookCatalog) error {
					fmt.Fprintf(w.c.stdout, "catalog strict: %v\n", c.Strict)
					return nil
				})
			}},
	}
}
