package linetable

import (
	"github.com/splitdbg/splitdbg/internal/dies"
	"github.com/splitdbg/splitdbg/internal/dwarfline"
)

// NewUnitsSource is FromELF's line source of every unit of d, for the
// external tests.
func NewUnitsSource(d *dies.Data, secs *dwarfline.Sections) Source {
	return newUnitsSource(d, secs, nil)
}
