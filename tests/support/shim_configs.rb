# For tests/oracle/shim: turns Hiera 3 configs that use the yaml backend into the
# same configs using the hierad backend, and lists the data directories to
# import so the hierad run sees the files the yaml run reads.
#
# The mapping: one hierad environment whose single hierarchy level is
# `datadir`; the files under a data directory D of group G are imported at
# level `datadir=G~D` ('/' written '~', since a level value cannot hold
# '/'). A config's `:datadir:` template T becomes `:level: "datadir=G~T"`,
# interpolated by the shim as Hiera interpolates :datadir:, so
# `nodes/%{::fqdn}` selects the node's tree in both runs.
#
# Input (stdin, JSON): {"url", "environment", "out",
#   "groups": [{"name", "dir", "configs": [file names]}]}.
# Output (stdout, JSON): {"configs": {"G/FILE": variant path or null},
#   "datadirs": [{"dir", "base", "rel", "level"}], "untranslated": {"G/FILE": reason}}.
require 'json'
require 'yaml'
require 'fileutils'
require 'hiera'
require 'hiera/util'

def mangle(text)
  text.chomp('/').gsub('/', '~')
end

# A :datadir: template as a glob: each %{...} may be anything.
def glob_of(template)
  template.chomp('/').gsub(/%\{[^}]*\}/, '*')
end

input = JSON.parse($stdin.read)
result = { 'configs' => {}, 'datadirs' => [], 'untranslated' => {} }
seen_dirs = {}
input.fetch('groups').each do |group|
  name = group.fetch('name')
  dir = group.fetch('dir')
  group.fetch('configs').uniq.each do |config|
    id = "#{name}/#{config}"
    path = File.expand_path(config, dir)
    reason = nil
    raw = begin
      File.file?(path) ? YAML.load_file(path) : (reason = 'no such file')
    rescue StandardError, Psych::Exception => e
      reason = "does not load: #{e.class}"
    end
    if reason.nil?
      if !raw.is_a?(Hash)
        reason = "not a Hash (#{raw.class})"
      elsif (raw['version'] || raw[:version] || 3).then { |v| !v.is_a?(Integer) || v >= 4 }
        reason = 'not version 3'
      else
        backends = [raw.fetch(:backends, ['yaml'])].flatten
        if !backends.all? { |b| b.is_a?(String) || b.is_a?(Symbol) }
          reason = 'backends not all names'
        elsif backends.none? { |b| b.to_s.downcase == 'yaml' }
          reason = 'no yaml backend'
        end
      end
    end
    if reason
      result['configs'][id] = nil
      result['untranslated'][id] = reason
      next
    end
    # Backend.datadir: the :yaml: section's :datadir:, else Util.var_dir.
    yaml_section = raw[:yaml]
    unless yaml_section.nil? || yaml_section.is_a?(Hash)
      result['configs'][id] = nil
      result['untranslated'][id] = ':yaml: is not a Hash'
      next
    end
    datadir = (yaml_section && yaml_section[:datadir]) || Hiera::Util.var_dir
    # A copy, so to_yaml writes no alias (which Hiera's loader refuses).
    level = datadir.is_a?(String) ? "datadir=#{name}~#{mangle(datadir)}" : Marshal.load(Marshal.dump(datadir))
    variant = raw.dup
    variant[:backends] = backends.map { |b| b.to_s.downcase == 'yaml' ? 'hierad' : b }
    variant[:hierad] = { url: input.fetch('url'), environment: input.fetch('environment'), level: level }
    out = File.join(input.fetch('out'), name, config)
    FileUtils.mkdir_p(File.dirname(out))
    File.write(out, variant.to_yaml)
    result['configs'][id] = out
    next unless datadir.is_a?(String) && !datadir.start_with?('/')

    Dir.chdir(dir) do
      Dir.glob(glob_of(datadir)).sort.each do |found|
        next unless File.directory?(found)

        abs = File.expand_path(found)
        key = "#{abs} #{name}"
        next if seen_dirs[key]

        seen_dirs[key] = true
        # `base` and `rel`: where Hiera runs and the datadir as it names
        # it, so an import there keeps broken files under Hiera's names.
        result['datadirs'] << { 'dir' => abs, 'base' => File.expand_path(dir), 'rel' => found,
                                'level' => "datadir=#{name}~#{mangle(found)}" }
      end
    end
  end
end
$stdout.write(JSON.generate(result))
