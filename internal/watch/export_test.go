package watch

// RowOf is rowOf, for the external tests.
var RowOf = rowOf
