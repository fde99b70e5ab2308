// Package layers holds no code: its tests hold the module's packages to
// the layers docs/architecture.md states. Every package belongs to one
// layer of the table in layers_test.go (the same table as the document's
// "Package map"), imports only from the layers that table allows, and is
// named in the document's package table; a new package is added to both
// tables.
package layers
