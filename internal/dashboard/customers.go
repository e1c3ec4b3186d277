package dashboard

// ImportPath is the dashboard's CSV upload. Its body may be far larger than the
// server's usual cap: the server's BodyLimit middleware skips it and the handler caps it
// itself.
const ImportPath = "/dashboard/customers/import"
