package docker

// Command lets the external tests probe nodes the way Start does.
var Command = command
