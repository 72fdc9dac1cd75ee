require 'digest'
require 'fileutils'
require_relative '../../../puppet_x/hierad_resources/upload'

Puppet::Type.type(:hierad_upload).provide(:ruby) do
  desc 'Uploads with PuppetX::Hierad::Upload over the shim HTTP client.'

  # The files' digest; with facts, theirs too, so changed facts are sent.
  def digest
    @digest ||= begin
      files = PuppetX::Hierad::Upload.digest(resource[:datadir])
      resource[:facts] ? Digest::SHA256.hexdigest("#{files}\0#{resource[:facts].to_json}") : files
    end
  end

  # The digest recorded by the last upload to this place, or :absent.
  def uploaded
    File.exist?(state_file) ? File.read(state_file).strip : :absent
  end

  def uploaded=(_value)
    options = {
      url: resource[:url], environment: resource[:environment], level: resource[:level],
      datadir: resource[:datadir], replace: resource[:replace], register: resource[:register],
      facts: resource[:facts],
      token: resource[:token], ca_file: resource[:ca_file]
    }
    summary = PuppetX::Hierad::Upload.run(options.compact)
    Puppet.info("hierad_upload[#{resource[:datadir]}]: #{summary.to_json}")
    FileUtils.mkdir_p(File.dirname(state_file))
    File.write(state_file, "#{digest}\n")
  rescue PuppetX::Hierad::Error => e
    raise Puppet::Error, e.message
  end

  private

  def state_file
    place = [Array(resource[:url]).join(','), resource[:environment], resource[:level], resource[:datadir]].join("\0")
    File.join(Puppet[:vardir], 'hierad_upload', Digest::SHA256.hexdigest(place))
  end
end
