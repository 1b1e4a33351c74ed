package devplane

import "github.com/burstpool/burstpool/test/harness/localcp"

// Proc is a runtime process the stack started, in its own process group,
// logging to a file. It keeps how it was started, to start it again.
type Proc struct {
	localcp.Process

	logDir string
	path   string
	args   []string
	env    []string
}

// start starts path with args, env added to the environment, output to
// logDir/name.log. With stopWithParent the process gets SIGTERM when the
// caller exits.
func start(logDir, name string, stopWithParent bool, env []string, path string, args ...string) (*Proc, error) {
	p, err := localcp.Start(logDir, name, stopWithParent, env, path, args...)
	if err != nil {
		return nil, err
	}
	return &Proc{Process: p, logDir: logDir, path: path, args: args, env: env}, nil
}

// again starts p's command again, after Stop.
func (p *Proc) again(stopWithParent bool) (*Proc, error) {
	return start(p.logDir, p.Name, stopWithParent, p.env, p.path, p.args...)
}
