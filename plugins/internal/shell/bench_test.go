package shell

import "testing"

// BenchmarkAnalyze measures one parse and analysis of a typical agent command line.
func BenchmarkAnalyze(b *testing.B) {
	for _, tc := range []struct{ name, cmd string }{
		{"short", "git log --oneline -n 20"},
		{"typical", "cd services/api && go build ./... && ./bin/server --help | head -20"},
		{"ifs_trick", "IFS=,;c=rm,-rf,/;$c"},
		{"program", "alias x='rm -rf'; f() { cd \"$1\" && x .; }; echo build | xargs -I{} f {}"},
		{"one_liner", "python3 -c \"import subprocess; subprocess.run(['go', 'test', './...'], check=True)\""},
		{"substitutions", "docker run --rm -v \"$(pwd)\":/src -u \"$(id -u):$(id -g)\" -w /src golang:1.26 go build -o \"bin/$(basename \"$(pwd)\")\" ./..."},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.cmd)))
			b.ReportAllocs()
			for b.Loop() {
				Analyze(tc.cmd)
			}
		})
	}
}
