package adapter

import (
	"fmt"
	"regexp"
	"slices"
)

// ListFunctions implements service.Client: Delve's function list, plus
// every split procedure of the executable matching filter that Delve does
// not list, under the name Delve gives functions ("C.name" for C). Delve
// lists one name per DWARF subprogram, so fragment symbols (foo.cold)
// never appear, and a split function with DWARF is already there: the
// additions are split functions known only from symbols or other
// sources. With tracefollow the list is Delve's.
func (c *Client) ListFunctions(filter string, tracefollow int) ([]string, error) {
	fns, err := c.delve.ListFunctions(filter, tracefollow)
	if err != nil || tracefollow > 0 {
		return fns, err
	}
	re, err := regexp.Compile(filter)
	if err != nil {
		return fns, fmt.Errorf("adapter: filter %q: %w", filter, err)
	}
	n := len(fns)
	for name := range c.res.SplitFunctions() {
		if re.MatchString(name) {
			fns = append(fns, name)
		}
	}
	if len(fns) > n {
		slices.Sort(fns)
		fns = slices.Compact(fns)
	}
	return fns, nil
}
