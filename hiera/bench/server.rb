# The hierad server the shim's benchmarks (bench.rb, steps.rb) run
# against: `hierad serve` on 127.0.0.1:0 over an empty database in a
# temporary folder; at exit it is stopped and the folder removed.
require 'fileutils'

module BenchServer
  # Starts `bin` over `tmp`/`name`.db and returns its URL; aborts, naming
  # `name`, if it does not say where it listens.
  def self.start(bin, tmp, name)
    err = IO.pipe
    pid = spawn(bin, 'serve', '--listen', '127.0.0.1:0', '--db', File.join(tmp, "#{name}.db"), '--no-sample',
                err: err[1], out: File::NULL)
    err[1].close
    url = nil
    50.times do
      line = err[0].gets or break
      break if (url = line[/\Alistening on (\S+)/, 1])
    end
    abort "#{name}: hierad serve did not start" unless url
    # Keep reading its log so that it never blocks on a full pipe.
    Thread.new { err[0].each_line { nil } }
    at_exit do
      Process.kill('TERM', pid)
      Process.wait(pid)
      FileUtils.rm_rf(tmp)
    end
    url
  end
end
